/**
 * The coordinator's state: the fold of its log. It holds a `lease-fence` {@link LeaseTable}
 * (fence counter, current leases, replay cache) plus what the lease rules do not know: the
 * current boot (the clock domain of every instant in the table), the leases carried across the
 * last restart and still in grace, and recently recorded fence rejections.
 *
 * The state is mutable for speed (O(1) per event): {@link evolve} updates the state it is given.
 * Whoever passes a state to `evolve` hands over ownership of it.
 *
 * @see docs/design.md § "The event-sourced coordinator"
 */
import {
  COORDINATOR_SNAPSHOT_SCHEMA_VERSION,
  CoordinatorSnapshotStateSchema,
  REJECTIONS_LISTED,
  type CoordinatorSnapshotState,
  type RecordedRejection,
} from '@lease-fence/protocol';
import { BoundedMap, LeaseTable, type LeaseRecord, type LeaseTableSnapshot } from 'lease-fence';
import { EventLogCorruptError } from '../ports/event-log-errors.js';
import type { Snapshot } from '../ports/event-log.js';

/** Rejection idempotency keys remembered, oldest evicted first. */
export const REJECTION_KEYS_KEPT = 65_536;

/** Recorded rejections kept for display (`GET /v1/rejections`), oldest evicted first. */
export const REJECTIONS_KEPT = REJECTIONS_LISTED;

/** The boot that wrote the latest folded event. All `*Millis` here are in `bootId`'s domain. */
export interface BootState {
  /** The boot id: the clock domain of every instant in the lease table. */
  readonly bootId: string;
  /** Reading of this boot's `CoordinatorStarted`. */
  readonly startedAtMillis: number;
  /** Latest reading of any event of this boot: how long it was observed alive. */
  lastAtMillis: number;
  /** Latest grace deadline among leases carried into this boot. */
  readonly graceDeadlineMillis: number;
}

/**
 * The fold of a coordinator's log. Mutable: {@link evolve} updates it in place, and only evolve
 * should (the decide functions only read it).
 */
export interface CoordinatorState {
  /** Fence counter, current leases, replay cache: mutated only through `LeaseTable.apply` and the recovery helpers. */
  readonly table: LeaseTable;
  /** Number of events folded (the log position of the latest one). */
  position: number;
  /** The namespace this log belongs to, from the first `CoordinatorStarted`. */
  namespace: string | undefined;
  /** The boot that wrote the latest event; `undefined` before the first `CoordinatorStarted`. */
  boot: BootState | undefined;
  /** Leases carried across the last restart and not renewed since: resource → fence. */
  readonly carried: Map<string, number>;
  /**
   * Idempotency keys ({@link rejectionKey}: gate, resource, seq) of recorded rejections, each
   * with what was recorded under it ({@link rejectionContent}), oldest first, at most
   * {@link REJECTION_KEYS_KEPT}.
   */
  readonly rejectionKeys: BoundedMap<string, string>;
  /** Recorded rejections with their positions, oldest first, at most {@link REJECTIONS_KEPT}. */
  readonly rejections: RecordedRejection[];
  /**
   * Per gate and resource ({@link gateResourceKey}), the highest rejection seq recorded
   * (`FenceRejected`) or declared missing (`RejectionsMissing`): the next report expected is
   * `highestSeq + 1`. One entry per gate and resource ever reported, never evicted.
   */
  readonly rejectionSeqs: Map<string, RejectionSeqs>;
  /** Position of the latest `SnapshotTaken` event (0 = none). */
  lastSnapshotPosition: number;
  /** Fence-first reservations pending a gate's admit, by resource (at most one per resource). */
  readonly reservations: Map<string, Reservation>;
  /**
   * Per resource, the highest fence ever reserved for it by fence-first handover (granted,
   * pending or burned): a gate may hold it as its floor, so reports naming it can be true.
   */
  readonly reservedFences: Map<string, number>;
  /**
   * Lock-delay anchors: resource → the reading (milliseconds, the current boot's domain) of its
   * latest unclean loss — a `LeaseExpired`, or a `FenceRejected` of one of its writes — since its
   * latest grant; a grant removes the entry. A new grant waits until this reading plus the
   * resource's lock-delay. Re-anchored into each new boot like carried leases: only the time the
   * dead boot observed after the loss counts, so a loss before the current boot has a negative
   * reading.
   */
  readonly lostAtMillis: Map<string, number>;
}

/** How far a gate's refusals of one resource have reached the log. */
export interface RejectionSeqs {
  readonly gateId: string;
  readonly resource: string;
  /** The highest seq recorded or declared missing. Integer ≥ 0. */
  highestSeq: number;
  /**
   * The seqs declared missing (`RejectionsMissing`) and not reported since, as `[fromSeq,
   * throughSeq]` ranges in the order they were declared: a late report of one is recorded. Every
   * other seq at or below `highestSeq` was recorded (see {@link wasRecorded}).
   */
  readonly missing: [fromSeq: number, throughSeq: number][];
}

/** The key of a (gate, resource) pair in {@link CoordinatorState.rejectionSeqs}: unambiguous, since each part's length prefixes it. */
export const gateResourceKey = (gateId: string, resource: string): string =>
  `${gateId.length}:${gateId}${resource.length}:${resource}`;

/** The seq a gate's next report for `resource` should carry: one above the highest recorded or declared missing (1 when none). */
export const nextExpectedSeq = (state: CoordinatorState, gateId: string, resource: string): number =>
  (state.rejectionSeqs.get(gateResourceKey(gateId, resource))?.highestSeq ?? 0) + 1;

/**
 * Whether `seq` of (gate, resource) was recorded (`FenceRejected`): at or below the highest seq
 * known and not declared missing since. It answers also once the report's key has left
 * {@link CoordinatorState.rejectionKeys} (more than {@link REJECTION_KEYS_KEPT} newer reports), so a
 * resend that late is still known for what it is, and never recorded twice.
 */
export const wasRecorded = (state: CoordinatorState, gateId: string, resource: string, seq: number): boolean => {
  const seqs = state.rejectionSeqs.get(gateResourceKey(gateId, resource));
  return (
    seqs !== undefined &&
    seq <= seqs.highestSeq &&
    !seqs.missing.some(([fromSeq, throughSeq]) => fromSeq <= seq && seq <= throughSeq)
  );
};

/**
 * What a gate needs from this log before it admits a write after its own start (its data
 * directory may be empty, or restored from an old backup): the latest fence granted on the
 * resource, and how far this gate's refusals of it reached the log.
 */
export interface GateRecoveryView {
  /**
   * The latest generation granted on the resource ({@link LeaseTable.highestFence}), whether
   * current or ended; `holderId` is its holder while it is the current lease, `undefined` once
   * it ended (the table keeps only the fence then). `undefined` when the resource was never granted.
   */
  readonly latestGrant: { readonly fence: number; readonly holderId: string | undefined } | undefined;
  /** The highest refusal seq of this gate and resource recorded or declared missing; 0 when none. */
  readonly lastRejectionSeq: number;
}

/** Reads {@link GateRecoveryView} for `gateId` on `resource` (pure; reads only). */
export const gateRecoveryOf = (state: CoordinatorState, gateId: string, resource: string): GateRecoveryView => {
  const fence = state.table.highestFence(resource);
  const lease = fence === 0 ? undefined : state.table.lease(resource);
  return {
    latestGrant: fence === 0 ? undefined : { fence, holderId: lease?.fence === fence ? lease.holderId : undefined },
    lastRejectionSeq: nextExpectedSeq(state, gateId, resource) - 1,
  };
};

/**
 * A fence-first reservation: `fence` is reserved for an acquire on its resource and waits for a
 * gate to admit it (`FenceReserved`). Instants are in the current boot's domain.
 */
export interface Reservation {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  readonly requestId: string;
  /** The TTL the lease gets once active (milliseconds). */
  readonly ttlMillis: number;
  /** When the coordinator burns the fence if no gate admitted it (milliseconds, current boot's domain). */
  readonly deadlineMillis: number;
}

/** A current lease as the coordinator shows it: `inGrace` when carried across a restart and not renewed since. */
export type LeaseView = LeaseRecord & { readonly inGrace: boolean };

/** Options of {@link createInitialState}. */
export interface InitialStateOptions {
  /** Grants remembered for idempotent retries: this many acquisitions and as many renewals. @defaultValue 1024 (lease-fence's default) */
  readonly replayCacheSize?: number;
}

/** The state of an empty log. */
export function createInitialState(options: InitialStateOptions = {}): CoordinatorState {
  return {
    table: new LeaseTable(options.replayCacheSize === undefined ? {} : { replayCacheSize: options.replayCacheSize }),
    position: 0,
    namespace: undefined,
    boot: undefined,
    carried: new Map(),
    rejectionKeys: new BoundedMap(REJECTION_KEYS_KEPT),
    rejections: [],
    rejectionSeqs: new Map(),
    lastSnapshotPosition: 0,
    reservations: new Map(),
    reservedFences: new Map(),
    lostAtMillis: new Map(),
  };
}

/** The idempotency key of a rejection: unambiguous, since each part's length prefixes it. */
export const rejectionKey = (gateId: string, resource: string, seq: number): string =>
  `${gateId.length}:${gateId}${resource.length}:${resource}${seq}`;

/**
 * What a rejection report says, compared when its (gate, resource, seq) comes again: kind, both
 * holders and both fences. The gate's wall time is display only and not part of it.
 */
export const rejectionContent = (report: {
  readonly kind: string;
  readonly rejected: { readonly holderId: string; readonly fence: number };
  readonly current: { readonly holderId: string; readonly fence: number };
}): string =>
  JSON.stringify([
    report.kind,
    report.rejected.holderId,
    report.rejected.fence,
    report.current.holderId,
    report.current.fence,
  ]);

/**
 * One `rejectionKeys` entry of a snapshot: `JSON.stringify([key, content])`. Entries of earlier
 * snapshots are the bare key (it starts with a digit, never with `[`).
 */
const encodeRejectionKey = (key: string, content: string): string => JSON.stringify([key, content]);

/** A snapshot's `rejectionKeys` entry as [key, content]; `'bare-key'` for an earlier snapshot's entry; `undefined` if malformed. */
const decodeRejectionKey = (entry: string): readonly [key: string, content: string] | 'bare-key' | undefined => {
  if (!entry.startsWith('[')) return 'bare-key';
  try {
    const parsed: unknown = JSON.parse(entry);
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && typeof parsed[1] === 'string')
      return [parsed[0], parsed[1]];
  } catch {
    // falls through: malformed
  }
  return undefined;
};

/** The current leases with their grace flag, in {@link LeaseTable.leases}'s order (their resources last became held). */
export function leasesOf(state: CoordinatorState): LeaseView[] {
  return [...state.table.leases()].map((lease) => ({
    ...lease,
    inGrace: state.carried.get(lease.resource) === lease.fence,
  }));
}

/** A deep copy: evolving one never affects the other. */
export function cloneState(state: CoordinatorState): CoordinatorState {
  return {
    table: state.table.clone(),
    position: state.position,
    namespace: state.namespace,
    boot: state.boot === undefined ? undefined : { ...state.boot },
    carried: new Map(state.carried),
    rejectionKeys: state.rejectionKeys.clone(),
    rejections: state.rejections.map((r) => ({ ...r })),
    rejectionSeqs: new Map(
      [...state.rejectionSeqs].map(([key, seqs]) => [
        key,
        { ...seqs, missing: seqs.missing.map(([fromSeq, throughSeq]) => [fromSeq, throughSeq]) },
      ]),
    ),
    lastSnapshotPosition: state.lastSnapshotPosition,
    reservations: new Map(state.reservations),
    reservedFences: new Map(state.reservedFences),
    lostAtMillis: new Map(state.lostAtMillis),
  };
}

/**
 * The state as a snapshot for {@link EventLog.saveSnapshot}: plain JSON, covering `state.position` events.
 * @see CoordinatorSnapshotStateSchema in `@lease-fence/protocol` for the shape.
 */
export function toSnapshot(state: CoordinatorState): Snapshot {
  const json: CoordinatorSnapshotState = {
    position: state.position,
    ...(state.namespace === undefined ? {} : { namespace: state.namespace }),
    ...(state.boot === undefined ? {} : { boot: { ...state.boot } }),
    carried: [...state.carried].map(([resource, fence]) => ({ resource, fence })),
    rejectionKeys: [...state.rejectionKeys].map(([key, content]) => encodeRejectionKey(key, content)),
    rejections: state.rejections.map((r) => ({ ...r })),
    rejectionSeqs: [...state.rejectionSeqs.values()].map((seqs) => ({
      ...seqs,
      missing: seqs.missing.map(([fromSeq, throughSeq]) => [fromSeq, throughSeq]),
    })),
    lastSnapshotPosition: state.lastSnapshotPosition,
    ...(state.reservations.size === 0 ? {} : { reservations: [...state.reservations.values()].map((r) => ({ ...r })) }),
    ...(state.reservedFences.size === 0
      ? {}
      : { reservedFences: [...state.reservedFences].map(([resource, fence]) => ({ resource, fence })) }),
    table: state.table.toJSON(),
    lockDelays: [...state.lostAtMillis].map(([resource, lostAtMillis]) => ({ resource, lostAtMillis })),
  };
  return { position: state.position, schemaVersion: COORDINATOR_SNAPSHOT_SCHEMA_VERSION, state: json };
}

/**
 * Restores a state from a snapshot written by {@link toSnapshot}.
 * @returns the state, or `undefined` when the snapshot cannot restore this version's state
 *   exactly, and the caller then replays the whole log (a snapshot is only an optimisation):
 *   another `schemaVersion` (version 1 predates the lock-delay anchors), or one written before
 *   the lease table kept its per-resource `highestFences`, its remembered renewals
 *   (`renewalReplayCache`) or its remembered releases (`releaseReplayCache`), before `rejectionKeys` kept each report's content, or before
 *   `rejectionSeqs` (gap detection), or their `missing` ranges, were kept.
 * @throws {@link EventLogCorruptError} naming the snapshot's position when its state is malformed
 *   or does not cover exactly `snapshot.position` events.
 */
export function fromSnapshot(snapshot: Snapshot): CoordinatorState | undefined {
  if (snapshot.schemaVersion !== COORDINATOR_SNAPSHOT_SCHEMA_VERSION) return undefined;
  const corrupt = (path: string, message: string, cause?: unknown): EventLogCorruptError =>
    new EventLogCorruptError({ position: snapshot.position, issues: [{ path: `snapshot.${path}`, message }], cause });
  const parsed = CoordinatorSnapshotStateSchema.safeParse(snapshot.state);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw corrupt(issue?.path.map(String).join('.') ?? '', issue?.message ?? 'malformed', parsed.error);
  }
  const json = parsed.data;
  if (json.position !== snapshot.position)
    throw corrupt('position', `the state covers ${json.position} events, the snapshot claims ${snapshot.position}`);
  let table: LeaseTable;
  try {
    table = LeaseTable.fromJSON(json.table as LeaseTableSnapshot);
  } catch (error) {
    throw corrupt('table', error instanceof Error ? error.message : String(error), error);
  }
  const rejectionKeys = new BoundedMap<string, string>(REJECTION_KEYS_KEPT);
  const tableJson = json.table as LeaseTableSnapshot;
  let exact =
    tableJson.highestFences !== undefined &&
    tableJson.renewalReplayCache !== undefined &&
    tableJson.releaseReplayCache !== undefined;
  for (const [index, entry] of json.rejectionKeys.entries()) {
    const decoded = decodeRejectionKey(entry);
    if (decoded === undefined)
      throw corrupt(`rejectionKeys.${index}`, 'must be a JSON array [key, content] of two strings');
    if (decoded === 'bare-key') exact = false;
    else rejectionKeys.set(decoded[0], decoded[1]);
  }
  // A snapshot written before highestFences, remembered renewals or releases, rejection contents, rejection seqs or their
  // missing ranges were kept: readable, not exact (see @returns).
  if (!exact || json.rejectionSeqs === undefined || json.rejectionSeqs.some((seqs) => seqs.missing === undefined))
    return undefined;
  const rejectionSeqs = new Map<string, RejectionSeqs>();
  for (const [index, seqs] of json.rejectionSeqs.entries()) {
    const key = gateResourceKey(seqs.gateId, seqs.resource);
    if (rejectionSeqs.has(key))
      throw corrupt(
        `rejectionSeqs.${index}`,
        `lists gate ${JSON.stringify(seqs.gateId)} and resource ${JSON.stringify(seqs.resource)} twice`,
      );
    rejectionSeqs.set(key, {
      gateId: seqs.gateId,
      resource: seqs.resource,
      highestSeq: seqs.highestSeq,
      missing: (seqs.missing ?? []).map(([fromSeq, throughSeq]) => [fromSeq, throughSeq]),
    });
  }
  return {
    table,
    position: json.position,
    namespace: json.namespace,
    boot: json.boot === undefined ? undefined : { ...json.boot },
    carried: new Map(json.carried.map((c) => [c.resource, c.fence])),
    rejectionKeys,
    rejections: json.rejections,
    rejectionSeqs,
    lastSnapshotPosition: json.lastSnapshotPosition,
    reservations: new Map((json.reservations ?? []).map((r) => [r.resource, { ...r }])),
    reservedFences: new Map((json.reservedFences ?? []).map((r) => [r.resource, r.fence])),
    lostAtMillis: new Map(json.lockDelays.map((d) => [d.resource, d.lostAtMillis])),
  };
}
