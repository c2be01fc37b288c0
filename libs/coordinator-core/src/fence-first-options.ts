/**
 * Fence-first handover, the shell's port: how the coordinator asks a resource's gates to admit
 * a reserved fence before the lease becomes active. The decider reserves, activates and burns
 * (see ./decider/fence-first.ts); waiting for a gate is I/O and lives behind this port.
 *
 * @see ./durable-coordinator.ts
 */

/** What the coordinator asks a gate of `resource`: durably raise your floor to `fence` for `holderId`. */
export interface FenceAdmitRequest {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  /** The acquire's requestId (for logs). */
  readonly requestId: string;
  /** How long the port may take before answering `undefined` (milliseconds). */
  readonly timeoutMillis: number;
}

/** Fence-first settings of a {@link DurableCoordinator}. */
export interface FenceFirstOptions {
  /** Whether acquires on `resource` wait for a gate's durable admit (e.g. a pattern match). */
  appliesTo(resource: string): boolean;
  /** How long an acquire waits for a gate before its fence is burned (milliseconds, positive integer). */
  readonly timeoutMillis: number;
  /**
   * Asks the gates guarding `request.resource` to admit `request.fence`. Resolves with the id of
   * the first gate that confirmed its floor is durable, or `undefined` when none did within
   * `request.timeoutMillis` (it must settle by then: the shell does not run a timer of its own,
   * so simulated time can drive it). A rejection counts as `undefined`.
   */
  admit(request: FenceAdmitRequest): Promise<{ readonly gateId: string } | undefined>;
}
