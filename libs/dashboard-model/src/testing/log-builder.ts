/**
 * Test helper (not shipped in the app): builds schema-valid recorded events with readable
 * calls, a shared clock and consecutive positions.
 *
 * @internal
 */
import type { CarriedLease, CoordinatorEvent, RecordedEvent } from '@lease-fence/protocol';

/** Starting point of a {@link LogBuilder}'s clocks. */
export interface LogBuilderOptions {
  /** @defaultValue 'boot-a' */
  readonly bootId?: string;
  /** Coordinator wall clock, epoch milliseconds. @defaultValue 1_780_000_000_000 */
  readonly wallMillis?: number;
  /** Monotonic reading in `bootId`'s domain, milliseconds. @defaultValue 1_000 */
  readonly atMillis?: number;
  /** First position. @defaultValue 1 */
  readonly position?: number;
  /** TTL of grants and renewals, milliseconds. @defaultValue 10_000 */
  readonly ttlMillis?: number;
}

/** @internal Writes a log one call at a time; wall and monotonic clocks advance together. */
export class LogBuilder {
  readonly events: RecordedEvent[] = [];
  bootId: string;
  wallMillis: number;
  atMillis: number;
  position: number;
  readonly ttlMillis: number;

  constructor(options: LogBuilderOptions = {}) {
    this.bootId = options.bootId ?? 'boot-a';
    this.wallMillis = options.wallMillis ?? 1_780_000_000_000;
    this.atMillis = options.atMillis ?? 1_000;
    this.position = options.position ?? 1;
    this.ttlMillis = options.ttlMillis ?? 10_000;
  }

  /** Moves both clocks forward by `millis`. */
  advance(millis: number): this {
    this.wallMillis += millis;
    this.atMillis += millis;
    return this;
  }

  /** Skips `count` positions (a slice of a log). */
  skip(count: number): this {
    this.position += count;
    return this;
  }

  started(
    options: {
      carried?: readonly Omit<CarriedLease, 'expiresAtMillis'>[];
      graceMillis?: number;
      recoveredFence?: number;
      previousBootId?: string;
    } = {},
  ): RecordedEvent {
    const graceMillis = options.graceMillis ?? this.ttlMillis;
    const carriedLeases = (options.carried ?? []).map((c) => ({ ...c, expiresAtMillis: this.atMillis + graceMillis }));
    return this.#push({
      type: 'CoordinatorStarted',
      version: 1,
      data: {
        ...this.#stamp(),
        namespace: 'default',
        ...(options.previousBootId === undefined ? {} : { previousBootId: options.previousBootId }),
        recoveredFence: options.recoveredFence ?? 0,
        eventsReplayed: this.position - 1,
        fromSnapshot: false,
        replayMillis: 12,
        graceDeadlineMillis: carriedLeases.length > 0 ? this.atMillis + graceMillis : this.atMillis,
        carriedLeases,
      },
    });
  }

  /** A restart: new boot id, monotonic clock restarting at `atMillis`, wall moved by `downMillis`. */
  restart(
    bootId: string,
    options: {
      downMillis?: number;
      atMillis?: number;
      carried?: readonly Omit<CarriedLease, 'expiresAtMillis'>[];
      graceMillis?: number;
      recoveredFence?: number;
    } = {},
  ): RecordedEvent {
    const previousBootId = this.bootId;
    this.bootId = bootId;
    this.wallMillis += options.downMillis ?? 500;
    this.atMillis = options.atMillis ?? 2_000;
    return this.started({ ...options, previousBootId });
  }

  granted(
    resource: string,
    holderId: string,
    fence: number,
    options: { ttlMillis?: number; requestId?: string } = {},
  ): RecordedEvent {
    const ttlMillis = options.ttlMillis ?? this.ttlMillis;
    return this.#push({
      type: 'LeaseGranted',
      version: 1,
      data: {
        ...this.#stamp(),
        resource,
        holderId,
        fence,
        requestId: options.requestId ?? `req-${fence}`,
        ttlMillis,
        expiresAtMillis: this.atMillis + ttlMillis,
      },
    });
  }

  renewed(resource: string, holderId: string, fence: number, options: { ttlMillis?: number } = {}): RecordedEvent {
    const ttlMillis = options.ttlMillis ?? this.ttlMillis;
    return this.#push({
      type: 'LeaseRenewed',
      version: 1,
      data: {
        ...this.#stamp(),
        resource,
        holderId,
        fence,
        requestId: `renew-${fence}-${this.position}`,
        ttlMillis,
        expiresAtMillis: this.atMillis + ttlMillis,
      },
    });
  }

  released(resource: string, holderId: string, fence: number): RecordedEvent {
    return this.#push({ type: 'LeaseReleased', version: 1, data: { ...this.#stamp(), resource, holderId, fence } });
  }

  expired(resource: string, holderId: string, fence: number): RecordedEvent {
    return this.#push({ type: 'LeaseExpired', version: 1, data: { ...this.#stamp(), resource, holderId, fence } });
  }

  rejected(
    resource: string,
    rejected: { holderId: string; fence: number },
    current: { holderId: string; fence: number },
    options: { gateId?: string; seq?: number; kind?: 'stale' | 'double-grant'; gateWallMillis?: number } = {},
  ): RecordedEvent {
    return this.#push({
      type: 'FenceRejected',
      version: 1,
      data: {
        ...this.#stamp(),
        resource,
        gateId: options.gateId ?? 'gate-1',
        seq: options.seq ?? this.position,
        kind: options.kind ?? 'stale',
        rejected,
        current,
        ...(options.gateWallMillis === undefined ? {} : { gateWallMillis: options.gateWallMillis }),
      },
    });
  }

  missing(resource: string, fromSeq: number, throughSeq: number, gateId = 'gate-1'): RecordedEvent {
    return this.#push({
      type: 'RejectionsMissing',
      version: 1,
      data: { ...this.#stamp(), resource, gateId, fromSeq, throughSeq, reportedSeq: throughSeq + 1 },
    });
  }

  admitted(resource: string, holderId: string, fence: number, gateId = 'gate-1'): RecordedEvent {
    return this.#push({
      type: 'FenceAdmitted',
      version: 1,
      data: { ...this.#stamp(), resource, gateId, holderId, fence },
    });
  }

  /** A gate's floor above the log's fences (`FenceFloorReported`); the counter rises to `raisedTo`. */
  floorReported(resource: string, holderId: string, fence: number, raisedTo: number, gateId = 'gate-1'): RecordedEvent {
    return this.#push({
      type: 'FenceFloorReported',
      version: 1,
      data: { ...this.#stamp(), resource, gateId, holderId, fence, raisedTo },
    });
  }

  /** A fence-first reservation, its deadline `timeoutMillis` (default 2 000) after now. */
  reserved(
    resource: string,
    holderId: string,
    fence: number,
    options: { requestId?: string; timeoutMillis?: number } = {},
  ): RecordedEvent {
    return this.#push({
      type: 'FenceReserved',
      version: 1,
      data: {
        ...this.#stamp(),
        resource,
        holderId,
        fence,
        requestId: options.requestId ?? `req-${fence}`,
        ttlMillis: this.ttlMillis,
        deadlineMillis: this.atMillis + (options.timeoutMillis ?? 2_000),
      },
    });
  }

  burned(
    resource: string,
    holderId: string,
    fence: number,
    reason: 'fence-unavailable' | 'coordinator-restarted' = 'fence-unavailable',
  ): RecordedEvent {
    return this.#push({
      type: 'FenceBurned',
      version: 1,
      data: { ...this.#stamp(), resource, holderId, fence, requestId: `req-${fence}`, reason },
    });
  }

  checkpointed(): RecordedEvent {
    return this.#push({ type: 'CoordinatorCheckpointed', version: 1, data: this.#stamp() });
  }

  #stamp(): { bootId: string; atMillis: number; wallMillis: number } {
    return { bootId: this.bootId, atMillis: this.atMillis, wallMillis: this.wallMillis };
  }

  #push(event: CoordinatorEvent): RecordedEvent {
    const recorded = { position: this.position, recordedAtMillis: this.wallMillis + 1, event };
    this.position += 1;
    this.events.push(recorded);
    return recorded;
  }
}
