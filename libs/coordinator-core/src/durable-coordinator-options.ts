/**
 * The durable coordinator's options, their defaults and checks, and the argument checks of its
 * commands. Ids and fences are checked with lease-fence's rules (the one copy of each, which the
 * protocol's schemas are built from), so a command the log would refuse is refused before it is
 * decided.
 *
 * @see ./durable-coordinator.ts
 */
import { MillisSchema, type CoordinatorEvent } from '@lease-fence/protocol';
import {
  describeValue,
  MAX_TTL_MILLIS,
  requireFence,
  requireId,
  requireInteger,
  requireObject,
  requireTtlMillis,
  type Clock,
} from 'lease-fence';
import type { CoordinatorCommand } from './decider/commands.js';
import type { FenceFirstOptions } from './fence-first-options.js';
import { checkLockDelayRules, type LockDelayRule } from './lock-delay.js';
import type { EventLog } from './ports/event-log.js';

/** The coordinator's health: only `'ready'` takes commands. */
export type DurableCoordinatorStatus = 'ready' | 'superseded' | 'unhealthy' | 'closed';

/** Options of {@link DurableCoordinator.open}. */
export interface DurableCoordinatorOptions {
  /** The log this coordinator is the single writer of. Not closed by {@link DurableCoordinator.close}. */
  readonly log: EventLog;
  /** The namespace the log belongs to (checked against the log's first `CoordinatorStarted`). */
  readonly namespace: string;
  /**
   * Monotonic clock of this boot. `clock.domain` IS the boot id: it must never have been used by
   * an earlier boot of this log (use a fresh random id per process).
   */
  readonly clock: Clock;
  /** Wall clock, epoch milliseconds, stamped on events for display only. @defaultValue Date.now */
  readonly wallClock?: () => number;
  /** TTL in milliseconds when a command names none. Integer in [minTtlMillis, maxTtlMillis]. */
  readonly defaultTtlMillis: number;
  /** Shortest TTL a holder may ask for, in milliseconds. @defaultValue 1 */
  readonly minTtlMillis?: number;
  /** Longest TTL a holder may ask for, in milliseconds; at most lease-fence's `MAX_TTL_MILLIS`. @defaultValue MAX_TTL_MILLIS (2^31 - 1) */
  readonly maxTtlMillis?: number;
  /** Events between snapshots (counted from the previous `SnapshotTaken`). Positive integer. @defaultValue 10_000 */
  readonly snapshotEvery?: number;
  /**
   * While leases are live and nothing was appended for this long (milliseconds), a
   * `CoordinatorCheckpointed` event records this boot's uptime, so a later recovery shortens
   * carried leases' grace by it. Positive integer. @defaultValue 1000
   */
  readonly checkpointIntervalMillis?: number;
  /**
   * Fences skipped above a gate's reported floor when it is above every fence this log issued for
   * its resource (the log was lost, or restored from an old backup): room for fences issued before
   * the loss, after that floor, that never reached a gate. Non-negative integer.
   * @defaultValue 1_000_000
   * @see DurableCoordinator.reportFloor
   */
  readonly lostFenceMarginFences?: number;
  /**
   * After starting on a log that has issued no fence (a new log, or one that was lost), refuse
   * acquisitions for this long (milliseconds, this boot's clock) with
   * `CoordinatorUnavailableError('awaiting-floors')` (retryable), so that gates reporting their
   * floors ({@link DurableCoordinator.reportFloor}) do so before the first grant and no fence
   * issued before a loss is issued again. Set it above the gates' report interval. 0 = no wait.
   * Non-negative integer. @defaultValue 0
   */
  readonly floorWaitMillis?: number;
  /**
   * While a lease carried across a restart is in grace (not renewed since), checkpoint after this
   * long without an append instead (milliseconds). A boot that dies loses at most this much of
   * its uptime from the record, so every boot that lives longer than this shortens the grace
   * the next one gives, and a crash loop cannot keep a silent holder's lease alive.
   * Positive integer. @defaultValue min(100, checkpointIntervalMillis)
   * @see decideStart's TSDoc in `decider/decide.ts` for the bound this gives.
   */
  readonly graceCheckpointIntervalMillis?: number;
  /**
   * Also checkpoint when no lease is live (a heartbeat every `checkpointIntervalMillis` of
   * silence), so a standby watching the log can tell an idle coordinator from a dead one.
   * @defaultValue false
   */
  readonly heartbeat?: boolean;
  /**
   * Take over only if the log is still at this version after replay: a standby passes the
   * version at which it saw the active coordinator go silent. Otherwise `open` rejects with
   * {@link ExpectedVersionConflictError} and appends nothing. @defaultValue no check
   */
  readonly takeOverAtVersion?: number;
  /** Most commands per append (group commit batch cap). 1 disables group commit. Positive integer. @defaultValue 256 */
  readonly maxBatch?: number;
  /**
   * Most appends in flight at once (pipelined group commit): while batch n is being made durable,
   * batch n+1 is decided against the state that includes n and appended with the version after
   * n as its expected version. Outcomes are still acknowledged in order, each only after its own
   * append and every earlier one resolved. Takes effect only when the log declares
   * {@link EventLog.appendsInCallOrder}; otherwise each append is awaited before the next batch
   * is decided (the inline SQLite writer: its append holds the event loop until durable, so there
   * is nothing to overlap). 1 disables pipelining. Integer 1-1024.
   *
   * 16 by default: the SQLite writer thread (`libs/event-log-sqlite/src/writer-thread.ts`) writes
   * the appends queued behind a COMMIT in one transaction, so a batch decided during a commit
   * waits for the next commit rather than for the batches queued before it (2 in flight, one
   * transaction each: BENCHMARKS.md, "the writer thread groups its transactions").
   * @defaultValue 16
   */
  readonly maxAppendsInFlight?: number;
  /** Grants remembered for idempotent retries: this many acquisitions, and as many renewals (a retried renewal is answered without renewing again); each kind evicts its oldest first. Non-negative integer. @defaultValue 1024 */
  readonly replayCacheSize?: number;
  /**
   * Fences that may have been handed out by appends with an unknown outcome (e.g.
   * {@link DurableCoordinator.highestMintedFence} of a coordinator that became unhealthy):
   * recovery raises the counter to at least this. Nothing is remembered between coordinators:
   * whoever re-opens after a failure passes it (see `supervisor/coordinator-supervisor.ts`).
   * Non-negative integer. @defaultValue 0
   */
  readonly burnFencesThrough?: number;
  /**
   * Lock-delay rules: after a resource's holder is lost uncleanly (its lease expired rather than
   * being released, or a gate refused one of its writes), the resource is not granted again for
   * the delay of the most specific rule covering it ({@link lockDelayMillisFor}); acquires get
   * `{ ok: false, reason: 'lock-delay', retryAfterMillis }` meanwhile. Durable: the losses are in
   * the log. Patterns valid and listed once; delays integers in [0, 2^31 - 1] ms.
   * @defaultValue [] (no delay)
   */
  readonly lockDelays?: readonly LockDelayRule[];
  /**
   * Run the expiry and checkpoint timers. Turn off in tests that drive time with a manual clock
   * and call {@link DurableCoordinator.expireDue} / {@link DurableCoordinator.checkpoint}.
   * @defaultValue true
   */
  readonly runTimers?: boolean;
  /**
   * Fence-first handover: acquires on the resources it applies to reserve their fence and become
   * active only once a gate durably admitted it; otherwise the fence is burned and the acquire
   * answers `fence-unavailable`. @defaultValue none (every acquire is granted at once)
   */
  readonly fenceFirst?: FenceFirstOptions;
  /**
   * Metrics hook: one call per append, once durable, with its event and command counts, its
   * duration (ms), and the events appended (`appended`, in log order).
   */
  onAppend?(info: {
    readonly events: number;
    readonly commands: number;
    readonly millis: number;
    readonly appended: readonly CoordinatorEvent[];
  }): void;
  /**
   * Called once per batch with events, right after its append was posted to the log and before it
   * is durable (`events`, in log order), for work that can run while the commit is in flight —
   * the coordinator service signs the batch's grants then (`apps/coordinator/src/signing/grant-signer.ts`).
   * Nothing derived from these events may be shown before the commands' outcomes resolve: the
   * append may still fail, and then no outcome is acknowledged.
   */
  onAppendPosted?(events: readonly CoordinatorEvent[]): void;
  /** Metrics hook: one call per acknowledged command, denials included (`ok: false` with `reason`). */
  onOutcome?(command: CoordinatorCommand['type'], outcome: { readonly ok: boolean; readonly reason?: string }): void;
  /** Called once when the coordinator stops being ready: superseded, unhealthy (with the cause) or closed. */
  onStatusChange?(status: DurableCoordinatorStatus, cause?: unknown): void;
  /** Called after each snapshot save: `position` on success, `error` on failure (not fatal: the log is complete). */
  onSnapshot?(result: { readonly position: number; readonly error?: unknown }): void;
}

/** Options with defaults applied and checked. @internal */
export interface Config {
  readonly log: EventLog;
  readonly namespace: string;
  readonly clock: Clock;
  readonly wallClock: () => number;
  readonly defaultTtlMillis: number;
  readonly minTtlMillis: number;
  readonly maxTtlMillis: number;
  readonly snapshotEvery: number;
  readonly checkpointIntervalMillis: number;
  readonly graceCheckpointIntervalMillis: number;
  readonly lostFenceMarginFences: number;
  readonly floorWaitMillis: number;
  readonly maxBatch: number;
  /** `maxAppendsInFlight`, or 1 when the log does not apply concurrent appends in call order. */
  readonly maxAppendsInFlight: number;
  readonly replayCacheSize: number | undefined;
  readonly burnFencesThrough: number;
  readonly lockDelays: readonly LockDelayRule[];
  readonly runTimers: boolean;
  readonly heartbeat: boolean;
  readonly takeOverAtVersion: number | undefined;
  readonly fenceFirst: FenceFirstOptions | undefined;
  readonly hooks: Pick<
    DurableCoordinatorOptions,
    'onAppend' | 'onAppendPosted' | 'onOutcome' | 'onStatusChange' | 'onSnapshot'
  >;
}

/** Runs a metrics or status hook; a hook that throws never breaks the command pipeline (it becomes a process warning). */
export function callHook(hook: () => void): void {
  try {
    hook();
  } catch (error) {
    process.emitWarning(error instanceof Error ? error : new Error(String(error)), { code: 'LEASE_FENCE_HOOK_FAILED' });
  }
}

/** An id by lease-fence's id rule (`requireId`, the one copy, which the protocol's `IdSchema` is built from), returning the value. */
export function checkId(api: string, field: string, value: unknown): string {
  requireId(api, field, value);
  return value;
}

/** A fence: lease-fence's fence rule (a positive safe integer), returning the value. */
export function checkFence(api: string, field: string, value: unknown): number {
  requireFence(api, field, value);
  return value;
}

/** Wall-clock epoch milliseconds: finite, non-negative. */
export function checkWallMillis(api: string, field: string, value: unknown): number {
  if (typeof value !== 'number')
    throw new TypeError(`${api}: ${field} must be epoch milliseconds, got ${describeValue(value)}`);
  if (!MillisSchema.safeParse(value).success)
    throw new RangeError(
      `${api}: ${field} must be finite, non-negative epoch milliseconds, got ${describeValue(value)}`,
    );
  return value;
}

/** An integer option of {@link DurableCoordinator.open}, by lease-fence's `requireInteger`, returning the value. */
function integerOption(field: string, value: unknown, min: number, max: number, unit: string): number {
  requireInteger('DurableCoordinator.open', field, value, { min, max, unit });
  return value;
}

/** Applies defaults to `options` and checks every field. @throws TypeError / RangeError naming the option, its unit and the value. */
export function resolveOptions(options: DurableCoordinatorOptions): Config {
  const api = 'DurableCoordinator.open';
  requireObject(api, 'options', options);
  const { log, clock } = options;
  if (log === null || typeof log !== 'object' || typeof log.append !== 'function')
    throw new TypeError(`${api}: log must be an EventLog, got ${describeValue(log)}`);
  if (clock === null || typeof clock !== 'object' || typeof clock.now !== 'function')
    throw new TypeError(`${api}: clock must be a Clock, got ${describeValue(clock)}`);
  checkId(api, 'clock.domain (the boot id)', clock.domain);
  if (options.wallClock !== undefined && typeof options.wallClock !== 'function') {
    throw new TypeError(
      `${api}: wallClock must be a function returning epoch milliseconds, got ${describeValue(options.wallClock)}`,
    );
  }
  const minTtlMillis = options.minTtlMillis ?? 1;
  requireTtlMillis(api, 'minTtlMillis', minTtlMillis);
  const maxTtlMillis = options.maxTtlMillis ?? MAX_TTL_MILLIS;
  requireTtlMillis(api, 'maxTtlMillis', maxTtlMillis, { minTtlMillis, maxTtlMillis: MAX_TTL_MILLIS });
  requireTtlMillis(api, 'defaultTtlMillis', options.defaultTtlMillis, { minTtlMillis, maxTtlMillis });
  const max = Number.MAX_SAFE_INTEGER;
  const checkpointIntervalMillis = integerOption(
    'checkpointIntervalMillis',
    options.checkpointIntervalMillis ?? 1000,
    1,
    MAX_TTL_MILLIS,
    'milliseconds',
  );
  return {
    log,
    namespace: checkId(api, 'namespace', options.namespace),
    clock,
    wallClock: options.wallClock ?? Date.now,
    defaultTtlMillis: options.defaultTtlMillis,
    minTtlMillis,
    maxTtlMillis,
    snapshotEvery: integerOption('snapshotEvery', options.snapshotEvery ?? 10_000, 1, max, 'events'),
    checkpointIntervalMillis,
    graceCheckpointIntervalMillis: integerOption(
      'graceCheckpointIntervalMillis',
      options.graceCheckpointIntervalMillis ?? Math.min(100, checkpointIntervalMillis),
      1,
      MAX_TTL_MILLIS,
      'milliseconds',
    ),
    floorWaitMillis: integerOption('floorWaitMillis', options.floorWaitMillis ?? 0, 0, MAX_TTL_MILLIS, 'milliseconds'),
    lostFenceMarginFences: integerOption(
      'lostFenceMarginFences',
      options.lostFenceMarginFences ?? 1_000_000,
      0,
      max,
      'fences',
    ),
    maxBatch: integerOption('maxBatch', options.maxBatch ?? 256, 1, max, 'commands'),
    maxAppendsInFlight: Math.min(
      integerOption('maxAppendsInFlight', options.maxAppendsInFlight ?? 16, 1, 1024, 'appends'),
      log.appendsInCallOrder === true ? 1024 : 1,
    ),
    replayCacheSize:
      options.replayCacheSize === undefined
        ? undefined
        : integerOption('replayCacheSize', options.replayCacheSize, 0, max, 'grants'),
    burnFencesThrough: integerOption('burnFencesThrough', options.burnFencesThrough ?? 0, 0, max, 'fence'),
    lockDelays: checkLockDelayRules(api, options.lockDelays ?? []),
    runTimers: options.runTimers ?? true,
    heartbeat: options.heartbeat ?? false,
    takeOverAtVersion:
      options.takeOverAtVersion === undefined
        ? undefined
        : integerOption('takeOverAtVersion', options.takeOverAtVersion, 0, max, 'events'),
    fenceFirst: checkFenceFirst(api, options.fenceFirst),
    hooks: {
      onAppend: options.onAppend,
      onAppendPosted: options.onAppendPosted,
      onOutcome: options.onOutcome,
      onStatusChange: options.onStatusChange,
      onSnapshot: options.onSnapshot,
    },
  };
}

function checkFenceFirst(api: string, fenceFirst: FenceFirstOptions | undefined): FenceFirstOptions | undefined {
  if (fenceFirst === undefined) return undefined;
  requireObject(api, 'fenceFirst', fenceFirst);
  if (typeof fenceFirst.appliesTo !== 'function')
    throw new TypeError(
      `${api}: fenceFirst.appliesTo must be a function (resource) => boolean, got ${describeValue(fenceFirst.appliesTo)}`,
    );
  if (typeof fenceFirst.admit !== 'function')
    throw new TypeError(`${api}: fenceFirst.admit must be a function, got ${describeValue(fenceFirst.admit)}`);
  integerOption('fenceFirst.timeoutMillis', fenceFirst.timeoutMillis, 1, MAX_TTL_MILLIS, 'milliseconds');
  return fenceFirst;
}
