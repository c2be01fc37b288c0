/**
 * The `defects` switch: the bugs this system exists to prevent, each injected on its own into
 * the simulation's wiring — never into production code. Each one substitutes or wraps a real
 * component at the seam where the bug would live in a real system: the holder's deadline
 * arithmetic, the resource's gate, the coordinator's decider or recovery, the log adapter.
 *
 * The falsification suite runs the search with each defect and fails if the invariants do not
 * catch it within its budget, which is what shows the search would find these bugs.
 *
 * @see docs/design.md § "The library's rules", § "The event-sourced coordinator"
 */
import {
  decide as realDecide,
  type AppendOptions,
  type AppendResult,
  type CoordinatorEvent,
  type EventLog,
  type FenceFirstOptions,
  type ReadRange,
  type RecordedEvent,
  type Snapshot,
} from '@lease-fence/coordinator-core';
import {
  DoubleGrantError,
  FenceGate,
  StaleFenceError,
  type FenceGateOptions,
  type FenceToken,
  type GateFloor,
  type Instant,
  type Lease,
  type RejectionKind,
  type RejectionRecord,
} from 'lease-fence';
import type { InvariantId } from './invariants.js';
import type { CoordinatorShell } from './nodes/coordinator-machine.js';
import type { DecideFunction } from './nodes/decider-shell.js';
import type { GateFactory, PendingWrite, SimGate } from './nodes/resource.js';
import { BootLog, type SimulatedDisk } from './nodes/simulated-disk.js';
import type { ScenarioName } from './scenarios.js';

/** Where a defect plugs into the world. Absent hooks = the real component. */
export interface DefectHooks {
  /** The holder computes its deadline itself (client seam). */
  readonly anchorDeadline?: (lease: Lease, replyReceivedAt: Instant, clockSkewMillis: number) => Instant;
  /** Resources use this gate instead of `FenceGate` (resource seam). */
  readonly gate?: GateFactory;
  /** A durable resource does not restore its floor after a restart (resource seam). */
  readonly skipFloorRestore?: boolean;
  /** The coordinator runs on this shell (DeciderShell for decider/recovery seams). */
  readonly shell?: CoordinatorShell;
  /** The DeciderShell decides with this (decider seam). */
  readonly decide?: DecideFunction;
  /** The coordinator's replay cache capacity (coordinator configuration). */
  readonly replayCacheSize?: number;
  /** Each boot sees the log through this (log adapter seam). */
  readonly bootLog?: (disk: SimulatedDisk, handle: EventLog) => BootLog;
  /** Fence-first mode: the coordinator's gate port is wrapped by this (coordinator seam). */
  readonly wrapFenceAdmit?: (admit: FenceFirstOptions['admit']) => FenceFirstOptions['admit'];
  /** Resources send their refusal reports all at once instead of one at a time in seq order (resource seam). */
  readonly reportConcurrently?: boolean;
}

/** A named, documented defect. */
export interface Defect {
  readonly name: string;
  /** The bug, in one sentence. */
  readonly bug: string;
  /** Where it is injected. */
  readonly seam: string;
  /** The scenario whose search must catch it. */
  readonly scenario: ScenarioName;
  /** Invariants that may catch it (the first violation must be one of these). */
  readonly caughtBy: readonly InvariantId[];
  readonly hooks: DefectHooks;
}

// ---- gates --------------------------------------------------------------------------------

/** A resource with no fencing at all: it applies every write. The holder's own `now < deadline` check is all that guards it. */
const unfencedGate: GateFactory = () => ({
  floor: undefined,
  nextSeq: 1,
  rejections: [],
  commit: <T>(_token: FenceToken, fn: () => T): T => fn(),
  admit: (): void => undefined,
});

/**
 * The real FenceGate, but the floor is raised only after the write's callback has finished:
 * check (wouldAdmit) → callback → raise. A stale write that arrives while a newer one is still
 * running passes the check.
 */
const floorAfterCallbackGate: GateFactory = (resource, options) => {
  const gate = new FenceGate(resource, options);
  return {
    get floor() {
      return gate.floor;
    },
    get nextSeq() {
      return gate.nextSeq;
    },
    get rejections() {
      return gate.rejections;
    },
    commit<T>(token: FenceToken, fn: () => T): T {
      if (!gate.wouldAdmit(token)) gate.admit(token); // throws the gate's own refusal, recorded
      const result = fn();
      (result as unknown as PendingWrite).whenDone(() => {
        if (gate.wouldAdmit(token)) gate.admit(token);
      });
      return result;
    },
    admit: (token: FenceToken): void => gate.admit(token),
  };
};

/**
 * A gate that admits a write only when `fence > floor` where the rule is `fence >= floor` for the
 * holder that set the floor: the current holder's second write under its own fence (or its
 * first write after a handover push) is refused as stale, and the refusal blames a holder that
 * did nothing wrong.
 */
class StrictGreaterGate implements SimGate {
  private floorFence = 0;
  private floorHolder = '';
  private seq: number;
  private readonly log: RejectionRecord[] = [];

  constructor(
    private readonly resource: string,
    private readonly options: FenceGateOptions,
  ) {
    this.seq = options.initialSeq ?? 1;
    const initialFloor = options.initialFloor;
    if (typeof initialFloor === 'number') {
      this.floorFence = initialFloor; // holder unknown: '' matches no holder id
    } else if (initialFloor !== undefined) {
      this.floorFence = initialFloor.fence;
      this.floorHolder = initialFloor.holderId;
    }
  }

  get floor(): GateFloor | undefined {
    return this.floorFence === 0 ? undefined : { fence: this.floorFence, holderId: this.floorHolder };
  }

  get nextSeq(): number {
    return this.seq;
  }

  get rejections(): readonly RejectionRecord[] {
    return this.log;
  }

  commit<T>(token: FenceToken, fn: () => T): T {
    this.admit(token);
    return fn();
  }

  admit(token: FenceToken): void {
    if (token.fence > this.floorFence) {
      this.floorFence = token.fence;
      this.floorHolder = token.holderId;
      return;
    }
    const kind: RejectionKind =
      token.fence === this.floorFence && token.holderId !== this.floorHolder ? 'double-grant' : 'stale';
    const rejection: RejectionRecord = Object.freeze({
      seq: this.seq++,
      resource: this.resource,
      kind,
      rejected: Object.freeze({ holderId: token.holderId, fence: token.fence }),
      current: Object.freeze({ holderId: this.floorHolder, fence: this.floorFence }),
    });
    this.log.push(rejection);
    this.options.onRejection?.(rejection);
    throw kind === 'stale' ? new StaleFenceError(rejection) : new DoubleGrantError(rejection);
  }
}

// ---- decider ------------------------------------------------------------------------------

/**
 * A decider whose renewal skips the expiry check: a renewal of a lease past its expiry that has
 * not been swept yet (and not taken by anyone) is renewed instead of answered `'expired'`.
 */
const renewExpiredDecide: DecideFunction = (command, state, now) => {
  const decision = realDecide(command, state, now);
  if (command.type !== 'RenewLease') return decision;
  const outcome = decision.outcome as { ok: boolean; reason?: string };
  if (outcome.ok || outcome.reason !== 'expired') return decision;
  const lease = state.table.lease(command.resource);
  if (lease === undefined || lease.fence !== command.fence || lease.holderId !== command.holderId) return decision;
  const ttlMillis = command.ttlMillis ?? lease.ttlMillis;
  const expiresAt = now.instant.plus(ttlMillis);
  const { resource, holderId, fence, requestId } = command;
  const event: CoordinatorEvent = {
    type: 'LeaseRenewed',
    version: 1,
    data: {
      bootId: now.instant.domain,
      atMillis: now.instant.millis,
      wallMillis: now.wallMillis,
      resource,
      holderId,
      fence,
      requestId,
      ttlMillis,
      expiresAtMillis: expiresAt.millis,
    },
  };
  return {
    events: [event],
    outcome: { ok: true, grant: { resource, holderId, fence, ttlMillis, requestId, coordinatorExpiresAt: expiresAt } },
  } as unknown as typeof decision;
};

/**
 * Recovery without the grace period: leases live at the crash are carried into the new boot
 * already expired (re-anchored at the start instant), so the next acquire takes them over while
 * their holders still believe they hold them.
 */
const graceSkippedDecide: DecideFunction = (command, state, now) => {
  const decision = realDecide(command, state, now);
  if (command.type !== 'StartCoordinator') return decision;
  const events = decision.events.map((event): CoordinatorEvent =>
    event.type !== 'CoordinatorStarted'
      ? event
      : {
          ...event,
          data: {
            ...event.data,
            graceDeadlineMillis: event.data.atMillis,
            carriedLeases: event.data.carriedLeases.map((lease) => ({
              ...lease,
              expiresAtMillis: event.data.atMillis,
            })),
          },
        },
  );
  return { ...decision, events };
};

// ---- log adapters -------------------------------------------------------------------------

/**
 * A boot that ignores the log: it sees only what it wrote itself (positions shifted past what
 * was there), so recovery replays nothing and the fence counter starts again at 1.
 */
class LogIgnoringBootLog extends BootLog {
  private readonly base: number;

  constructor(disk: SimulatedDisk, handle: EventLog) {
    super(disk, handle);
    this.base = disk.landedCount;
  }

  override append(events: readonly CoordinatorEvent[], options: AppendOptions): Promise<AppendResult> {
    return super.append(events, { expectedVersion: options.expectedVersion + this.base }).then((result) => ({
      fromPosition: result.fromPosition - this.base,
      toPosition: result.toPosition - this.base,
    }));
  }

  override read(range: ReadRange): AsyncIterable<RecordedEvent> {
    const base = this.base;
    const inner = this.handle.read({
      ...range,
      from: range.from + base,
      ...(range.to === undefined ? {} : { to: range.to + base }),
    });
    return {
      async *[Symbol.asyncIterator]() {
        for await (const recorded of inner) yield { ...recorded, position: recorded.position - base };
      },
    };
  }

  override async version(): Promise<number> {
    return (await super.version()) - this.base;
  }

  override async latestSnapshot(): Promise<Snapshot | undefined> {
    return undefined;
  }

  override async saveSnapshot(): Promise<void> {
    return undefined;
  }
}

/** How long the write-back cache of {@link AckBeforeDurableBootLog} holds a write before flushing it (ms). */
const WRITE_BACK_MILLIS = 200;

/**
 * A log adapter that acknowledges an append before its write has landed (a write-back cache
 * without fsync): the events land when the cache flushes, {@link WRITE_BACK_MILLIS} later, and a
 * crash before that loses them.
 */
class AckBeforeDurableBootLog extends BootLog {
  private version_ = -1;

  protected override nextLatency(): number {
    return WRITE_BACK_MILLIS;
  }

  override append(events: readonly CoordinatorEvent[], options: AppendOptions): Promise<AppendResult> {
    if (this.dead) return new Promise<AppendResult>(() => undefined);
    this.disk.onProgress();
    if (this.version_ < 0) this.version_ = options.expectedVersion;
    const fromPosition = this.version_ + 1;
    this.version_ += events.length;
    const pending = { events, options, resolve: () => undefined, reject: () => undefined };
    this.inFlight.push(pending);
    this.scheduleLanding(() => {
      const index = this.inFlight.indexOf(pending);
      if (index < 0 || this.dead) return;
      this.inFlight.splice(index, 1);
      this.land(events, options).catch(() => undefined);
    });
    return Promise.resolve({ fromPosition, toPosition: this.version_ });
  }

  override crash(): void {
    super.crash(false); // whatever was not written yet is gone
  }
}

// ---- the catalogue ------------------------------------------------------------------------

/** Every defect, by name. */
export const DEFECTS = {
  'reply-time-anchoring': {
    name: 'reply-time-anchoring',
    bug: 'The holder anchors its deadline at the instant the reply arrived (receivedAt + ttl - skew) instead of the instant the request was sent.',
    seam: "client: the agent replaces LeaseClient's send-anchored deadline with its own",
    scenario: 'lossy-network',
    caughtBy: ['I4-holder-window'],
    hooks: {
      anchorDeadline: (lease, receivedAt, clockSkewMillis) => receivedAt.plus(lease.ttlMillis - clockSkewMillis),
    },
  },
  'advisory-expiry-check': {
    name: 'advisory-expiry-check',
    bug: 'The resource trusts the holder: the holder checks `now < expiresAt` before its model call and the resource applies the write without a fence check.',
    seam: 'resource: an unfenced gate that applies every write',
    scenario: 'stalls',
    caughtBy: ['I1-no-stale-write'],
    hooks: { gate: unfencedGate },
  },
  'floor-after-callback': {
    name: 'floor-after-callback',
    bug: "The gate raises its floor after the write's callback finished instead of before it runs, so a stale write that arrives during a newer one passes.",
    seam: 'resource: FenceGate wrapped as check → callback → raise',
    scenario: 'stalls',
    caughtBy: ['I1-no-stale-write'],
    hooks: { gate: floorAfterCallbackGate },
  },
  'gate-strict-greater': {
    name: 'gate-strict-greater',
    bug: "The gate compares `fence > floor` where the rule is `fence >= floor` for the floor's own holder: the current holder's next write is refused.",
    seam: 'resource: a gate with the comparison flipped',
    scenario: 'calm',
    caughtBy: ['I8-refusal-justified'],
    hooks: { gate: (resource, options) => new StrictGreaterGate(resource, options) },
  },
  'renew-expired': {
    name: 'renew-expired',
    bug: 'A renewal of a lease past its expiry (not yet swept, not yet taken) is granted: an expired generation is resurrected.',
    seam: 'coordinator: decide wrapped in the DeciderShell (renewal without the expiry check)',
    scenario: 'lossy-network',
    caughtBy: ['I7-no-resurrection'],
    hooks: { shell: 'decider', decide: renewExpiredDecide },
  },
  'retry-fresh-grant': {
    name: 'retry-fresh-grant',
    bug: 'A retried or duplicated acquire (same requestId) after its lease ended gets a fresh grant instead of the old outcome.',
    seam: 'coordinator: DurableCoordinator with replayCacheSize 0 (no idempotent replay)',
    scenario: 'lossy-network',
    caughtBy: ['I9-retry-idempotent'],
    hooks: { replayCacheSize: 0 },
  },
  'fence-counter-reset': {
    name: 'fence-counter-reset',
    bug: 'The fence counter is not recovered on restart: each boot ignores the log and starts again at fence 1.',
    seam: 'log adapter: each boot sees an empty log (its own events only)',
    scenario: 'crash-recovery',
    caughtBy: ['I2-fence-unique', 'I3-fence-order', 'I4-holder-window', 'I5-ack-durable', 'I6-refusal-recorded'],
    hooks: { bootLog: (disk, handle) => new LogIgnoringBootLog(disk, handle) },
  },
  'grace-skipped': {
    name: 'grace-skipped',
    bug: 'Recovery skips the grace period: leases live at the crash are treated as expired by the new boot.',
    seam: "coordinator: StartCoordinator's decision re-anchors carried leases at the start instant (DeciderShell)",
    scenario: 'crash-recovery',
    caughtBy: ['I4-holder-window'],
    hooks: { shell: 'decider', decide: graceSkippedDecide },
  },
  'ack-before-durable': {
    name: 'ack-before-durable',
    bug: 'A grant is acknowledged before its append is durable; a crash loses it.',
    seam: 'log adapter: append resolves at once, the write lands later, a crash drops it',
    scenario: 'crash-recovery',
    caughtBy: ['I5-ack-durable', 'I2-fence-unique', 'I4-holder-window', 'I6-refusal-recorded'],
    hooks: { bootLog: (disk, handle) => new AckBeforeDurableBootLog(disk, handle) },
  },
  'skew-ignored': {
    name: 'skew-ignored',
    bug: "The holder anchors at send time but assumes perfect clocks (no skew margin): drift alone lets its deadline outlast the coordinator's expiry.",
    seam: "client: the agent's deadline is sentAt + ttl",
    scenario: 'calm',
    caughtBy: ['I4-holder-window'],
    hooks: { anchorDeadline: (lease) => lease.sentAt.plus(lease.ttlMillis) },
  },
  'floor-not-persisted': {
    name: 'floor-not-persisted',
    bug: "A durable resource forgets its gate's floor across its own restart (no initialFloor).",
    seam: 'resource: the gate is rebuilt without the persisted floor',
    scenario: 'resource-restarts',
    caughtBy: ['I1-no-stale-write'],
    hooks: { skipFloorRestore: true },
  },
  'lease-active-before-fence': {
    name: 'lease-active-before-fence',
    bug: 'Fence-first mode grants (and acknowledges) the lease as soon as it asked the gate, without waiting for the gate to confirm its floor is durable: the lease is active before the resource is fenced.',
    seam: 'coordinator: the gate port answers "admitted" at once while the admit is still on its way',
    scenario: 'fence-first',
    caughtBy: ['I10-fenced-before-active'],
    hooks: {
      wrapFenceAdmit: (admit) => (request) => {
        void admit(request); // the push still goes out, but nobody waits for it
        return Promise.resolve({ gateId: 'unconfirmed' });
      },
    },
  },
  'reports-out-of-order': {
    name: 'reports-out-of-order',
    bug: 'A gate sends each refusal report as soon as the refusal is made, without waiting for the one before to be acknowledged: a slow or retried report of seq 2 arrives after seq 3, and the coordinator records refusals as lost that were only late.',
    seam: 'resource: the reporter sends every outbox entry at once (reportRejections sends one at a time, in seq order)',
    scenario: 'everything',
    caughtBy: ['I11-gap-justified'],
    hooks: { reportConcurrently: true },
  },
} satisfies Record<string, Defect>;

/** A defect's name. */
export type DefectName = keyof typeof DEFECTS;

/** The defects the issues require the suite to catch (`skew-ignored` and `floor-not-persisted` are extras). */
export const REQUIRED_DEFECTS: readonly DefectName[] = [
  'reply-time-anchoring',
  'advisory-expiry-check',
  'floor-after-callback',
  'gate-strict-greater',
  'renew-expired',
  'retry-fresh-grant',
  'fence-counter-reset',
  'grace-skipped',
  'ack-before-durable',
  'lease-active-before-fence',
];
