/**
 * The simulation's oracle: the invariants the whole system must keep, checked online against
 * the ledger of facts every run records — events as they land in the durable log, leases as
 * clients complete them, writes as resources apply or refuse them. The first violation stops
 * the run, so a shrunk counterexample's trace ends where things went wrong.
 *
 * The checker is the only place that compares instants across clock domains: it converts every
 * reading to true time through the exact clock model ({@link ClockBook}), which the code under
 * test never sees.
 *
 * @see docs/design.md § "The library's rules", § "The event-sourced coordinator"
 */
import type { CoordinatorEvent } from '@lease-fence/coordinator-core';
import { DoubleGrantError, StaleFenceError, type FenceToken, type Instant, type RejectionRecord } from 'lease-fence';

/** The invariants, by id: what each one promises. */
export const INVARIANTS = {
  'I1-no-stale-write':
    'No stale write admitted after a newer one: a resource never applies a write whose fence is below one it already applied (nor an equal fence from another holder).',
  'I2-fence-unique':
    'Fences never reused: no two generations of ownership carry the same fence, across any number of coordinator restarts.',
  'I3-fence-order': 'Fences strictly increase per resource in grant order.',
  'I4-holder-window':
    "Holder's window within coordinator's: every lease deadline a client computes lies at or before the coordinator's expiry for that generation, and the coordinator never lets go of a generation before a holder's deadline.",
  'I5-ack-durable':
    'Acknowledged means durable: every grant or renewal a client received is in the log after recovery, and the log recovers.',
  'I6-refusal-recorded':
    "Every refusal is recorded: each StaleFenceError at a gate carries the gate's rejection record with both holders and fences, and with reporting on it reaches the coordinator's log.",
  'I7-no-resurrection':
    'No resurrection: a renewal is only ever decided for the current generation, before its expiry.',
  'I8-refusal-justified':
    'Every refusal is justified: a gate refuses only a fence below a floor it admitted, or an equal fence from another holder.',
  'I9-retry-idempotent': 'Retries are idempotent: one (holder, requestId) gets at most one generation.',
  'I10-fenced-before-active':
    'Fence-first: once a grant has been acknowledged to its holder, its resource admits no write under an older fence, even before the new holder wrote.',
  'I11-gap-justified':
    'A gap is recorded only for refusals that never reach the log: no seq named by a RejectionsMissing is ever recorded as a FenceRejected of that gate and resource.',
} as const;

/** An invariant's id. */
export type InvariantId = keyof typeof INVARIANTS;

/** A broken invariant, found at true time `atMillis`. */
export interface Violation {
  readonly invariant: InvariantId;
  /** True time the violation was detected, in milliseconds. */
  readonly atMillis: number;
  readonly message: string;
}

/** Converts a reading of any clock domain in the world to true time (the simulation's privilege). */
export interface ClockBook {
  /** True time (ms) at which the clock of `domain` reads `millis`. @throws Error for an unknown domain. */
  trueTimeOf(domain: string, millis: number): number;
}

/** A lease a client completed: the fact checked by I2, I4, I5. */
export interface CompletedLease {
  readonly kind: 'acquire' | 'renewal';
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  readonly requestId: string;
  /** The holder's deadline, in the holder's clock domain. */
  readonly deadline: Instant;
  /** The grant's coordinator expiry, in the coordinator boot's domain. */
  readonly coordinatorExpiresAt: Instant;
}

/** A gate refusal as a resource observed it: the fact checked by I6 and I8. */
export interface ObservedRefusal {
  /** The resource incarnation (a volatile resource starts a new one at each restart). */
  readonly incarnation: string;
  readonly gateId: string;
  readonly token: FenceToken;
  /** What the gate threw. */
  readonly error: unknown;
  /** The gate's rejection log right after the refusal. */
  readonly gateRejections: readonly RejectionRecord[];
}

/** Tolerance for float round-off when comparing true times (milliseconds). */
const EPSILON_MILLIS = 1e-6;

interface Generation {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  /** Domain and reading of the coordinator's current expiry of this generation (from the log). */
  expiresAt: { domain: string; millis: number } | undefined;
  /** Latest holder deadline seen for it, in true time. */
  maxDeadlineMillis: number;
  /** True time the coordinator let go of it (expired, superseded or forgotten); undefined while current. */
  endedAtMillis: number | undefined;
  released: boolean;
}

const genKey = (resource: string, fence: number, holderId: string): string =>
  `${resource}\u0000${fence}\u0000${holderId}`;
const reportKey = (gateId: string, resource: string, seq: number): string => `${gateId}\u0000${resource}\u0000${seq}`;
const sameParty = (a: { holderId: string; fence: number }, b: { holderId: string; fence: number }): boolean =>
  a.holderId === b.holderId && a.fence === b.fence;

/**
 * Checks the invariants as facts arrive. Report facts in the order they happen; the first
 * violation is passed to `onViolation` (and kept in {@link InvariantChecker.violation}); later
 * ones are ignored.
 */
export class InvariantChecker {
  private first: Violation | undefined;
  private readonly generations = new Map<string, Generation>();
  /** Current generation per resource, per the log. */
  private readonly current = new Map<string, Generation>();
  /** fence → the generation (resource, holder) that carries it, from the log and from clients. */
  private readonly fenceOwner = new Map<number, string>();
  private readonly lastGrantedFence = new Map<string, number>();
  private readonly grantedRequests = new Set<string>();
  private readonly landedGrants = new Set<string>();
  private readonly landedRenewals = new Set<string>();
  private readonly landedRejections = new Map<
    string,
    { rejected: { holderId: string; fence: number }; current: { holderId: string; fence: number } }
  >();
  private readonly completed: CompletedLease[] = [];
  private readonly appliedFloor = new Map<string, { holderId: string; fence: number }>();
  private readonly admittedByIncarnation = new Map<string, Set<string>>();
  private readonly reports = new Map<string, RejectionRecord & { gateId: string }>();
  private landedGrantCount = 0;
  private readonly counts: Record<InvariantId, number> = {
    'I1-no-stale-write': 0,
    'I2-fence-unique': 0,
    'I3-fence-order': 0,
    'I4-holder-window': 0,
    'I5-ack-durable': 0,
    'I6-refusal-recorded': 0,
    'I7-no-resurrection': 0,
    'I8-refusal-justified': 0,
    'I9-retry-idempotent': 0,
    'I10-fenced-before-active': 0,
    'I11-gap-justified': 0,
  };
  /** Seqs the log declared lost (RejectionsMissing), by report key (I11). */
  private readonly declaredMissing = new Set<string>();
  /** Highest fence acknowledged to a holder per resource (I10). */
  private readonly acknowledgedFence = new Map<string, { holderId: string; fence: number }>();

  constructor(
    private readonly clocks: ClockBook,
    private readonly now: () => number,
    private readonly onViolation: (violation: Violation) => void,
    /** Replay cache capacity of the coordinator: I9 holds only while no grant was evicted. */
    private readonly replayCacheSize: number,
    /** Check I10: only fence-first mode keeps it (the default mode is shown not to). */
    private readonly checkFencedBeforeActive = false,
  ) {}

  /** How many times each invariant was checked (a check that never runs proves nothing). */
  get checks(): Readonly<Record<InvariantId, number>> {
    return this.counts;
  }

  /** The first violation found, if any. */
  get violation(): Violation | undefined {
    return this.first;
  }

  // ---- the durable log ------------------------------------------------------------------

  /** An event landed in the durable log (called in log order). */
  eventLanded(event: CoordinatorEvent): void {
    const at = (millis: number): number => this.clocks.trueTimeOf(event.data.bootId, millis);
    switch (event.type) {
      case 'CoordinatorStarted': {
        // Recovery replayed everything before this event: every acknowledged lease must be in it.
        this.checkAcknowledgedDurable(`recovery of ${event.data.bootId}`, event.data.bootId);
        const startedAt = at(event.data.atMillis);
        const carried = new Set<string>();
        for (const lease of event.data.carriedLeases) {
          const generation = this.generation(lease.resource, lease.fence, lease.holderId);
          carried.add(genKey(lease.resource, lease.fence, lease.holderId));
          generation.expiresAt = { domain: event.data.bootId, millis: lease.expiresAtMillis };
          const graceEnd = at(lease.expiresAtMillis);
          this.counts['I4-holder-window'] += 1;
          if (!generation.released && generation.maxDeadlineMillis > graceEnd + EPSILON_MILLIS) {
            this.fail(
              'I4-holder-window',
              `recovery re-anchored ${lease.resource} fence ${lease.fence} (${lease.holderId}) to expire at t=${round(graceEnd)}ms, before the holder's deadline t=${round(generation.maxDeadlineMillis)}ms`,
            );
          }
          this.current.set(lease.resource, generation);
        }
        for (const [resource, generation] of [...this.current]) {
          if (!carried.has(genKey(resource, generation.fence, generation.holderId))) {
            this.end(
              generation,
              startedAt,
              `recovery forgot ${resource} fence ${generation.fence} (${generation.holderId})`,
            );
            this.current.delete(resource);
          }
        }
        return;
      }
      case 'LeaseGranted': {
        const { resource, holderId, fence, requestId } = event.data;
        const decidedAt = at(event.data.atMillis);
        const key = genKey(resource, fence, holderId);
        const owner = this.fenceOwner.get(fence);
        this.counts['I2-fence-unique'] += 1;
        this.counts['I3-fence-order'] += 1;
        this.counts['I9-retry-idempotent'] += 1;
        if (owner !== undefined && (owner !== key || this.generations.get(key)?.expiresAt !== undefined)) {
          this.fail(
            'I2-fence-unique',
            `fence ${fence} granted to ${holderId} on ${resource} was already issued (${describeKey(owner)})`,
          );
        }
        this.fenceOwner.set(fence, key);
        const last = this.lastGrantedFence.get(resource);
        if (last !== undefined && fence <= last) {
          this.fail('I3-fence-order', `${resource} granted fence ${fence} after fence ${last}`);
        }
        this.lastGrantedFence.set(resource, Math.max(fence, last ?? 0));
        this.landedGrantCount += 1;
        const request = `${holderId}\u0000${requestId}`;
        if (this.grantedRequests.has(request) && this.landedGrantCount <= this.replayCacheSize) {
          this.fail(
            'I9-retry-idempotent',
            `${holderId}'s request ${requestId} was granted a second generation (fence ${fence})`,
          );
        }
        this.grantedRequests.add(request);
        this.landedGrants.add(request);
        const previous = this.current.get(resource);
        if (previous !== undefined)
          this.end(previous, decidedAt, `${resource} fence ${previous.fence} superseded by fence ${fence}`);
        const generation = this.generation(resource, fence, holderId);
        generation.expiresAt = { domain: event.data.bootId, millis: event.data.expiresAtMillis };
        this.current.set(resource, generation);
        return;
      }
      case 'LeaseRenewed': {
        const { resource, holderId, fence, requestId } = event.data;
        this.landedRenewals.add(`${holderId}\u0000${requestId}`);
        this.counts['I7-no-resurrection'] += 1;
        const generation = this.current.get(resource);
        if (generation === undefined || generation.fence !== fence || generation.holderId !== holderId) {
          this.fail(
            'I7-no-resurrection',
            `renewal of ${resource} fence ${fence} (${holderId}) decided but that generation is not current`,
          );
        } else if (generation.expiresAt !== undefined) {
          const expired =
            generation.expiresAt.domain === event.data.bootId
              ? event.data.atMillis >= generation.expiresAt.millis
              : at(event.data.atMillis) >=
                this.clocks.trueTimeOf(generation.expiresAt.domain, generation.expiresAt.millis);
          if (expired) {
            this.fail(
              'I7-no-resurrection',
              `renewal of ${resource} fence ${fence} (${holderId}) decided at ${round(event.data.atMillis)}ms@${event.data.bootId}, at or after its expiry ${round(generation.expiresAt.millis)}ms@${generation.expiresAt.domain}`,
            );
          }
        }
        const target = generation ?? this.generation(resource, fence, holderId);
        target.expiresAt = { domain: event.data.bootId, millis: event.data.expiresAtMillis };
        return;
      }
      case 'LeaseReleased':
      case 'LeaseExpired': {
        const { resource, holderId, fence } = event.data;
        const generation = this.current.get(resource);
        if (generation === undefined || generation.fence !== fence || generation.holderId !== holderId) return;
        this.current.delete(resource);
        if (event.type === 'LeaseReleased') {
          generation.released = true;
          generation.endedAtMillis = at(event.data.atMillis);
        } else {
          this.end(generation, at(event.data.atMillis), `${resource} fence ${fence} (${holderId}) expired`);
        }
        return;
      }
      case 'FenceRejected': {
        const { gateId, resource, seq, rejected, current } = event.data;
        const key = reportKey(gateId, resource, seq);
        this.landedRejections.set(key, { rejected, current });
        this.counts['I11-gap-justified'] += 1;
        if (this.declaredMissing.has(key)) {
          this.fail(
            'I11-gap-justified',
            `${gateId}'s refusal #${seq} of ${resource} reached the log after the log had recorded it as missing (RejectionsMissing): a report overtook an earlier one`,
          );
        }
        return;
      }
      case 'RejectionsMissing': {
        const { gateId, resource, fromSeq, throughSeq } = event.data;
        this.counts['I11-gap-justified'] += 1;
        for (let seq = fromSeq; seq <= throughSeq; seq += 1) {
          const key = reportKey(gateId, resource, seq);
          if (this.landedRejections.has(key)) {
            this.fail(
              'I11-gap-justified',
              `the log recorded ${gateId}'s refusal #${seq} of ${resource} as missing, but it is already in the log`,
            );
            return;
          }
          this.declaredMissing.add(key);
        }
        return;
      }
      default:
        return;
    }
  }

  // ---- clients ---------------------------------------------------------------------------

  /**
   * A client completed a lease (acquire or renewal) with a clock of `holderDomain`.
   * Checks I4 (deadline within the grant's expiry and within the generation's end) and I2; an
   * acquire's fence becomes the one I10 measures later writes against.
   */
  leaseCompleted(lease: CompletedLease): void {
    const deadlineAt = this.clocks.trueTimeOf(lease.deadline.domain, lease.deadline.millis);
    const expiresAt = this.clocks.trueTimeOf(lease.coordinatorExpiresAt.domain, lease.coordinatorExpiresAt.millis);
    this.counts['I4-holder-window'] += 1;
    this.counts['I2-fence-unique'] += 1;
    if (deadlineAt > expiresAt + EPSILON_MILLIS) {
      this.fail(
        'I4-holder-window',
        `${lease.holderId}'s ${lease.kind} of ${lease.resource} fence ${lease.fence}: deadline t=${round(deadlineAt)}ms is ${by(deadlineAt, expiresAt)} after the coordinator's expiry t=${round(expiresAt)}ms`,
      );
    }
    const key = genKey(lease.resource, lease.fence, lease.holderId);
    const owner = this.fenceOwner.get(lease.fence);
    if (owner !== undefined && owner !== key) {
      this.fail(
        'I2-fence-unique',
        `${lease.holderId} holds fence ${lease.fence} on ${lease.resource}, but that fence belongs to ${describeKey(owner)}`,
      );
    }
    if (owner === undefined) this.fenceOwner.set(lease.fence, key);
    const generation = this.generation(lease.resource, lease.fence, lease.holderId);
    generation.maxDeadlineMillis = Math.max(generation.maxDeadlineMillis, deadlineAt);
    if (
      !generation.released &&
      generation.endedAtMillis !== undefined &&
      deadlineAt > generation.endedAtMillis + EPSILON_MILLIS
    ) {
      this.fail(
        'I4-holder-window',
        `${lease.holderId}'s deadline t=${round(deadlineAt)}ms for ${lease.resource} fence ${lease.fence} is after the coordinator let go of it at t=${round(generation.endedAtMillis)}ms`,
      );
    }
    this.completed.push(lease);
    if (lease.kind === 'acquire') {
      const acknowledged = this.acknowledgedFence.get(lease.resource);
      if (acknowledged === undefined || lease.fence > acknowledged.fence)
        this.acknowledgedFence.set(lease.resource, { holderId: lease.holderId, fence: lease.fence });
    }
  }

  /**
   * The coordinator recovered (or the run ended): every lease a client completed must be in the
   * durable log (I5). At a recovery, leases answered by the recovering boot itself are skipped
   * (it cannot have answered anything before its own start is durable).
   */
  checkAcknowledgedDurable(when: string, recoveringBoot?: string): void {
    for (const lease of this.completed) {
      if (lease.coordinatorExpiresAt.domain === recoveringBoot) continue;
      this.counts['I5-ack-durable'] += 1;
      const request = `${lease.holderId}\u0000${lease.requestId}`;
      const durable = lease.kind === 'acquire' ? this.landedGrants.has(request) : this.landedRenewals.has(request);
      if (!durable) {
        this.fail(
          'I5-ack-durable',
          `${when}: ${lease.holderId} received a ${lease.kind} of ${lease.resource} fence ${lease.fence} (req ${lease.requestId}) that is not in the log`,
        );
        return;
      }
    }
  }

  /** The log failed to recover (replay threw): I5. */
  recoveryFailed(error: unknown): void {
    this.fail('I5-ack-durable', `the log does not recover: ${error instanceof Error ? error.message : String(error)}`);
  }

  // ---- resources -------------------------------------------------------------------------

  /** A resource (incarnation) starts with `floor` (restored from its durable store, or none). */
  resourceStarted(incarnation: string, floor: { holderId: string; fence: number } | undefined): void {
    if (floor !== undefined) this.admitted(incarnation, floor);
  }

  /** A resource applied a write under `token` (I1; I10 when checked). */
  writeApplied(incarnation: string, token: FenceToken): void {
    if (this.checkFencedBeforeActive) {
      this.counts['I10-fenced-before-active'] += 1;
      const acknowledged = this.acknowledgedFence.get(token.resource);
      if (acknowledged !== undefined && token.fence < acknowledged.fence) {
        this.fail(
          'I10-fenced-before-active',
          `${token.resource} applied a write with fence ${token.fence} (${token.holderId}) after fence ${acknowledged.fence} was granted to ${acknowledged.holderId}`,
        );
      }
    }
    const floor = this.appliedFloor.get(incarnation);
    this.counts['I1-no-stale-write'] += 1;
    if (floor !== undefined) {
      if (token.fence < floor.fence) {
        this.fail(
          'I1-no-stale-write',
          `${token.resource} applied a write with fence ${token.fence} (${token.holderId}) after one with fence ${floor.fence} (${floor.holderId})`,
        );
      } else if (token.fence === floor.fence && token.holderId !== floor.holderId) {
        this.fail(
          'I1-no-stale-write',
          `${token.resource} applied writes with the same fence ${token.fence} from ${floor.holderId} and ${token.holderId}`,
        );
      }
    }
    if (floor === undefined || token.fence > floor.fence)
      this.appliedFloor.set(incarnation, { holderId: token.holderId, fence: token.fence });
    this.admitted(incarnation, token);
  }

  /** A resource's gate admitted `token` (a write or a handover push) in `incarnation`. */
  admitted(incarnation: string, token: { holderId: string; fence: number }): void {
    let set = this.admittedByIncarnation.get(incarnation);
    if (set === undefined) this.admittedByIncarnation.set(incarnation, (set = new Set()));
    set.add(`${token.holderId}\u0000${token.fence}`);
  }

  /** A gate refused a write or a push (I6 record, I8 justification); `reporting` = sent to the coordinator. */
  refused(refusal: ObservedRefusal, reporting: boolean): void {
    const { token, error, gateRejections } = refusal;
    this.counts['I6-refusal-recorded'] += 1;
    const isRefusal =
      (error instanceof StaleFenceError && error.code === 'stale-fence') ||
      (error instanceof DoubleGrantError && error.code === 'double-grant');
    if (!isRefusal) {
      this.fail(
        'I6-refusal-recorded',
        `${token.resource} refused fence ${token.fence} (${token.holderId}) with ${describeError(error)}, not a StaleFenceError/DoubleGrantError`,
      );
      return;
    }
    const record = error.rejection;
    const logged = gateRejections[gateRejections.length - 1];
    if (
      logged === undefined ||
      logged.seq !== record.seq ||
      !sameParty(logged.rejected, record.rejected) ||
      !sameParty(logged.current, record.current)
    ) {
      this.fail(
        'I6-refusal-recorded',
        `${token.resource}'s refusal of fence ${token.fence} (${token.holderId}) is not the last entry of the gate's rejection log`,
      );
      return;
    }
    if (!sameParty(record.rejected, token) || record.resource !== token.resource) {
      this.fail(
        'I6-refusal-recorded',
        `${token.resource}'s rejection record names ${record.rejected.holderId} fence ${record.rejected.fence}, not the refused ${token.holderId} fence ${token.fence}`,
      );
      return;
    }
    this.counts['I8-refusal-justified'] += 1;
    const justified =
      record.rejected.fence < record.current.fence ||
      (record.rejected.fence === record.current.fence && record.rejected.holderId !== record.current.holderId);
    const admitted =
      this.admittedByIncarnation
        .get(refusal.incarnation)
        ?.has(`${record.current.holderId}\u0000${record.current.fence}`) === true;
    if (!justified || !admitted) {
      this.fail(
        'I8-refusal-justified',
        `${token.resource} refused fence ${token.fence} (${token.holderId}) against floor ${record.current.fence} (${record.current.holderId})` +
          (admitted ? '' : ', a floor it never admitted'),
      );
      return;
    }
    if (reporting)
      this.reports.set(reportKey(refusal.gateId, record.resource, record.seq), { ...record, gateId: refusal.gateId });
  }

  /** A volatile resource restarted before these reports were acknowledged: they died with it. */
  reportsLost(gateId: string, resource: string, seqs: readonly number[]): void {
    for (const seq of seqs) this.reports.delete(reportKey(gateId, resource, seq));
  }

  /** End of the drain phase: every reported refusal is in the log with both parties (I6). */
  checkReportsRecorded(): void {
    for (const [key, record] of this.reports) {
      this.counts['I6-refusal-recorded'] += 1;
      const landed = this.landedRejections.get(key);
      if (landed === undefined) {
        this.fail(
          'I6-refusal-recorded',
          `${record.gateId}'s refusal #${record.seq} of ${record.resource} fence ${record.rejected.fence} (${record.rejected.holderId}) never reached the coordinator's log`,
        );
        return;
      }
      if (!sameParty(landed.rejected, record.rejected) || !sameParty(landed.current, record.current)) {
        this.fail(
          'I6-refusal-recorded',
          `${record.gateId}'s refusal #${record.seq} was logged with other holders or fences`,
        );
        return;
      }
    }
  }

  // ---- helpers ---------------------------------------------------------------------------

  private generation(resource: string, fence: number, holderId: string): Generation {
    const key = genKey(resource, fence, holderId);
    let generation = this.generations.get(key);
    if (generation === undefined) {
      generation = {
        resource,
        holderId,
        fence,
        expiresAt: undefined,
        maxDeadlineMillis: Number.NEGATIVE_INFINITY,
        endedAtMillis: undefined,
        released: false,
      };
      this.generations.set(key, generation);
    }
    return generation;
  }

  private end(generation: Generation, atMillis: number, what: string): void {
    generation.endedAtMillis = atMillis;
    if (generation.maxDeadlineMillis > Number.NEGATIVE_INFINITY) this.counts['I4-holder-window'] += 1;
    if (!generation.released && generation.maxDeadlineMillis > atMillis + EPSILON_MILLIS) {
      this.fail(
        'I4-holder-window',
        `${what} at t=${round(atMillis)}ms while ${generation.holderId}'s deadline is t=${round(generation.maxDeadlineMillis)}ms`,
      );
    }
  }

  private fail(invariant: InvariantId, message: string): void {
    if (this.first !== undefined) return;
    this.first = { invariant, atMillis: this.now(), message };
    this.onViolation(this.first);
  }
}

const round = (millis: number): number => Math.round(millis * 10) / 10;

/** The gap between two true times, precise enough to show a sub-millisecond drift. */
const by = (later: number, earlier: number): string => `${Number((later - earlier).toPrecision(3))}ms`;

const describeKey = (key: string): string => {
  const [resource, fence, holderId] = key.split('\u0000');
  return `${holderId} on ${resource} as fence ${fence}`;
};

const describeError = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);
