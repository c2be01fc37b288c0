/**
 * Test builders for log events: valid events with small, readable defaults, so a test names
 * only the fields it is about. Test doubles, not production code.
 *
 * Defaults: boot `'boot-1'`, monotonic reading `atMillis: 0`, wall time `wallMillis: 0`,
 * `ttlMillis: 10_000`, `expiresAtMillis = atMillis + ttlMillis`, `requestId: 'req-<fence>'`.
 */
import type {
  CoordinatorCheckpointed,
  CoordinatorStarted,
  FenceAdmitted,
  FenceFloorReported,
  FenceBurned,
  FenceRejected,
  FenceReserved,
  LeaseExpired,
  LeaseGranted,
  LeaseReleased,
  LeaseRenewed,
  RejectionsMissing,
  SnapshotTaken,
} from '@lease-fence/protocol';

/** The stamp every event carries; each field may be overridden. */
export interface StampInput {
  /** Boot id (clock domain of every `*Millis` instant of the event). @defaultValue 'boot-1' */
  readonly bootId?: string;
  /** Monotonic reading in milliseconds, `bootId` domain. @defaultValue 0 */
  readonly atMillis?: number;
  /** Wall epoch milliseconds, display only. @defaultValue 0 */
  readonly wallMillis?: number;
}

const stamp = (input: StampInput) => ({
  bootId: input.bootId ?? 'boot-1',
  atMillis: input.atMillis ?? 0,
  wallMillis: input.wallMillis ?? 0,
});

/** A `CoordinatorStarted` event: a fresh start (no carried leases) unless given. */
export const coordinatorStarted = (
  input: StampInput & Partial<Omit<CoordinatorStarted['data'], 'bootId' | 'atMillis' | 'wallMillis'>> = {},
): CoordinatorStarted => {
  const s = stamp(input);
  return {
    type: 'CoordinatorStarted',
    version: 1,
    data: {
      ...s,
      namespace: input.namespace ?? 'default',
      ...(input.previousBootId === undefined ? {} : { previousBootId: input.previousBootId }),
      recoveredFence: input.recoveredFence ?? 0,
      eventsReplayed: input.eventsReplayed ?? 0,
      fromSnapshot: input.fromSnapshot ?? false,
      replayMillis: input.replayMillis ?? 0,
      graceDeadlineMillis: input.graceDeadlineMillis ?? s.atMillis,
      carriedLeases: input.carriedLeases ?? [],
    },
  };
};

/** A `LeaseGranted` event for `resource` to `holderId` at `fence`. */
export const leaseGranted = (
  resource: string,
  holderId: string,
  fence: number,
  input: StampInput & {
    readonly ttlMillis?: number;
    readonly requestId?: string;
    readonly expiresAtMillis?: number;
  } = {},
): LeaseGranted => {
  const s = stamp(input);
  const ttlMillis = input.ttlMillis ?? 10_000;
  return {
    type: 'LeaseGranted',
    version: 1,
    data: {
      ...s,
      resource,
      holderId,
      fence,
      requestId: input.requestId ?? `req-${fence}`,
      ttlMillis,
      expiresAtMillis: input.expiresAtMillis ?? s.atMillis + ttlMillis,
    },
  };
};

/** A `LeaseRenewed` event: same fence, new expiry `atMillis + ttlMillis`. */
export const leaseRenewed = (
  resource: string,
  holderId: string,
  fence: number,
  input: StampInput & {
    readonly ttlMillis?: number;
    readonly requestId?: string;
    readonly expiresAtMillis?: number;
  } = {},
): LeaseRenewed => {
  const s = stamp(input);
  const ttlMillis = input.ttlMillis ?? 10_000;
  return {
    type: 'LeaseRenewed',
    version: 1,
    data: {
      ...s,
      resource,
      holderId,
      fence,
      requestId: input.requestId ?? `renew-${fence}`,
      ttlMillis,
      expiresAtMillis: input.expiresAtMillis ?? s.atMillis + ttlMillis,
    },
  };
};

/** A `LeaseReleased` event. */
export const leaseReleased = (
  resource: string,
  holderId: string,
  fence: number,
  input: StampInput = {},
): LeaseReleased => ({
  type: 'LeaseReleased',
  version: 1,
  data: { ...stamp(input), resource, holderId, fence },
});

/** A `LeaseExpired` event. */
export const leaseExpired = (
  resource: string,
  holderId: string,
  fence: number,
  input: StampInput = {},
): LeaseExpired => ({
  type: 'LeaseExpired',
  version: 1,
  data: { ...stamp(input), resource, holderId, fence },
});

/** A `FenceRejected` event: `rejected` was refused below (or at, for `double-grant`) `current`. */
export const fenceRejected = (
  input: StampInput & {
    readonly gateId?: string;
    readonly resource?: string;
    readonly seq?: number;
    readonly kind?: 'stale' | 'double-grant';
    readonly rejected?: { readonly holderId: string; readonly fence: number };
    readonly current?: { readonly holderId: string; readonly fence: number };
    readonly gateWallMillis?: number;
  } = {},
): FenceRejected => ({
  type: 'FenceRejected',
  version: 1,
  data: {
    ...stamp(input),
    gateId: input.gateId ?? 'gate-1',
    resource: input.resource ?? 'slot',
    seq: input.seq ?? 1,
    kind: input.kind ?? 'stale',
    rejected: { ...(input.rejected ?? { holderId: 'agent-a', fence: 1 }) },
    current: { ...(input.current ?? { holderId: 'agent-b', fence: 2 }) },
    ...(input.gateWallMillis === undefined ? {} : { gateWallMillis: input.gateWallMillis }),
  },
});

/** A `RejectionsMissing` event: `fromSeq`..`throughSeq` of gate `'gate-1'` on `'slot'` never reported; `reportedSeq` defaults to `throughSeq + 1`. */
export const rejectionsMissing = (
  fromSeq: number,
  throughSeq: number,
  input: StampInput & { readonly gateId?: string; readonly resource?: string; readonly reportedSeq?: number } = {},
): RejectionsMissing => ({
  type: 'RejectionsMissing',
  version: 1,
  data: {
    ...stamp(input),
    resource: input.resource ?? 'slot',
    gateId: input.gateId ?? 'gate-1',
    fromSeq,
    throughSeq,
    reportedSeq: input.reportedSeq ?? throughSeq + 1,
  },
});

/** A `FenceAdmitted` event. */
export const fenceAdmitted = (
  resource: string,
  holderId: string,
  fence: number,
  input: StampInput & { readonly gateId?: string } = {},
): FenceAdmitted => ({
  type: 'FenceAdmitted',
  version: 1,
  data: { ...stamp(input), resource, gateId: input.gateId ?? 'gate-1', holderId, fence },
});

/** A `FenceFloorReported` event: a gate's floor above the log's fences; the counter rises to `raisedTo` (default `fence`). */
export const fenceFloorReported = (
  resource: string,
  holderId: string,
  fence: number,
  input: StampInput & { readonly gateId?: string; readonly raisedTo?: number } = {},
): FenceFloorReported => ({
  type: 'FenceFloorReported',
  version: 1,
  data: {
    ...stamp(input),
    resource,
    gateId: input.gateId ?? 'gate-1',
    holderId,
    fence,
    raisedTo: input.raisedTo ?? fence,
  },
});

/** A `SnapshotTaken` event covering the first `coversPosition` events. */
export const snapshotTaken = (coversPosition: number, input: StampInput = {}): SnapshotTaken => ({
  type: 'SnapshotTaken',
  version: 1,
  data: { ...stamp(input), coversPosition },
});

/** A `CoordinatorCheckpointed` event (uptime checkpoint). */
export const coordinatorCheckpointed = (input: StampInput = {}): CoordinatorCheckpointed => ({
  type: 'CoordinatorCheckpointed',
  version: 1,
  data: stamp(input),
});

/** A `FenceReserved` event (fence-first handover): deadline `atMillis + 2000` unless given. */
export const fenceReserved = (
  resource: string,
  holderId: string,
  fence: number,
  input: StampInput & {
    readonly requestId?: string;
    readonly ttlMillis?: number;
    readonly deadlineMillis?: number;
  } = {},
): FenceReserved => ({
  type: 'FenceReserved',
  version: 1,
  data: {
    ...stamp(input),
    resource,
    holderId,
    fence,
    requestId: input.requestId ?? `req-${fence}`,
    ttlMillis: input.ttlMillis ?? 10_000,
    deadlineMillis: input.deadlineMillis ?? (input.atMillis ?? 0) + 2000,
  },
});

/** A `FenceBurned` event (fence-first handover): `fence-unavailable` unless given. */
export const fenceBurned = (
  resource: string,
  holderId: string,
  fence: number,
  input: StampInput & { readonly requestId?: string; readonly reason?: FenceBurned['data']['reason'] } = {},
): FenceBurned => ({
  type: 'FenceBurned',
  version: 1,
  data: {
    ...stamp(input),
    resource,
    holderId,
    fence,
    requestId: input.requestId ?? `req-${fence}`,
    reason: input.reason ?? 'fence-unavailable',
  },
});
