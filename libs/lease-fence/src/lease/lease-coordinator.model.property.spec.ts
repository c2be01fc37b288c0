/**
 * Model-based test: LeaseCoordinator against a deliberately naive model (plain arrays, linear
 * scans, numbers instead of Instants) under random sequences of acquire / retry / renew /
 * release / retried release / time passing / sweeping. After every command the outcome, the fence counter and the
 * set of current leases must agree. Seeded (`FC_SEED`, or a fixed default).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createManualClock, type ManualClock } from '../time/manual-clock.js';
import { LeaseCoordinator } from './lease-coordinator.js';
import type { AcquireOutcome, Grant, ReleaseOutcome, RenewOutcome } from './outcomes.js';

const seed = Number(process.env['FC_SEED'] ?? 20_261_130);
const REPLAY_CACHE_SIZE = 4;
const DEFAULT_TTL_MILLIS = 100;
const RESOURCES = ['r0', 'r1', 'r2'] as const;
const HOLDERS = ['h0', 'h1', 'h2'] as const;

// ---- the naive model -------------------------------------------------------------------------

interface ModelLease {
  resource: string;
  holderId: string;
  fence: number;
  ttlMillis: number;
  requestId: string;
  expiresAtMillis: number;
}
interface Model {
  nowMillis: number;
  issued: number;
  /** Every fence granted so far, with its resource: a plain list, scanned. */
  granted: { resource: string; fence: number }[];
  leases: ModelLease[];
  replay: { holderId: string; requestId: string; resource: string; fence: number }[];
  sent: { holderId: string; requestId: string; resource: string; ttlMillis: number }[];
  /** The last REPLAY_CACHE_SIZE releases that ended a lease, oldest first. */
  released: { resource: string; holderId: string; fence: number }[];
  /** Every release request sent, for retries. */
  sentReleases: { resource: string; holderId: string; fence: number }[];
  nextRequest: number;
  /** Every fence the real coordinator granted, with the acquire request it answered. */
  fenceOwners: Map<number, string>;
}
interface Real {
  clock: ManualClock;
  coordinator: LeaseCoordinator;
}

/** Outcomes with Instants flattened to millis, for comparison with the model. */
type Plain = Record<string, unknown>;
const plain = (outcome: AcquireOutcome | RenewOutcome | ReleaseOutcome): Plain => {
  if (!outcome.ok || !('grant' in outcome)) return { ...outcome };
  const grant: Grant = outcome.grant;
  return { ok: true, grant: { ...grant, coordinatorExpiresAt: grant.coordinatorExpiresAt.millis } };
};

const modelGrant = (lease: ModelLease, requestId: string): Plain => ({
  ok: true,
  grant: {
    resource: lease.resource,
    holderId: lease.holderId,
    fence: lease.fence,
    ttlMillis: lease.ttlMillis,
    requestId,
    coordinatorExpiresAt: lease.expiresAtMillis,
  },
});

const findLease = (m: Model, resource: string): ModelLease | undefined => m.leases.find((l) => l.resource === resource);
const dropLease = (m: Model, resource: string): void => {
  m.leases = m.leases.filter((l) => l.resource !== resource);
};

function modelAcquire(m: Model, resource: string, holderId: string, requestId: string, ttlMillis: number): Plain {
  const current = findLease(m, resource);
  const hit = m.replay.find((e) => e.holderId === holderId && e.requestId === requestId);
  if (hit !== undefined) {
    if (current !== undefined && current.fence === hit.fence && m.nowMillis < current.expiresAtMillis)
      return modelGrant(current, current.requestId);
    return { ok: false, reason: 'expired', fence: hit.fence };
  }
  if (current !== undefined && m.nowMillis < current.expiresAtMillis) {
    const retryAfterMillis = Math.ceil(current.expiresAtMillis - m.nowMillis);
    return current.holderId === holderId
      ? { ok: false, reason: 'already-held', heldBy: holderId, fence: current.fence, retryAfterMillis }
      : { ok: false, reason: 'held', heldBy: current.holderId, retryAfterMillis };
  }
  dropLease(m, resource);
  m.issued += 1;
  const lease = { resource, holderId, fence: m.issued, ttlMillis, requestId, expiresAtMillis: m.nowMillis + ttlMillis };
  m.leases.push(lease);
  m.granted.push({ resource, fence: lease.fence });
  m.replay.push({ holderId, requestId, resource, fence: lease.fence });
  if (m.replay.length > REPLAY_CACHE_SIZE) m.replay.shift();
  return modelGrant(lease, requestId);
}

/** The highest fence ever granted on `resource` (0 if none): a linear scan of every grant. */
const highestGranted = (m: Model, resource: string): number =>
  m.granted.filter((g) => g.resource === resource).reduce((highest, g) => Math.max(highest, g.fence), 0);

/**
 * Renew and release judge a token the same way: the live lease of that holder, or why not —
 * another holder's current fence or a fence never granted on this resource is `not-holder`;
 * a generation of this resource that has ended (or is past its expiry) is `expired`.
 */
function modelStanding(
  m: Model,
  resource: string,
  holderId: string,
  fence: number,
): ModelLease | 'expired' | 'not-holder' {
  const current = findLease(m, resource);
  if (current !== undefined && current.fence === fence) {
    if (current.holderId !== holderId) return 'not-holder';
    return m.nowMillis < current.expiresAtMillis ? current : 'expired';
  }
  return fence > highestGranted(m, resource) ? 'not-holder' : 'expired';
}

function modelRenew(
  m: Model,
  resource: string,
  holderId: string,
  fence: number,
  requestId: string,
  ttlMillis: number | undefined,
): Plain {
  const current = modelStanding(m, resource, holderId, fence);
  if (typeof current === 'string') return { ok: false, reason: current };
  current.ttlMillis = ttlMillis ?? current.ttlMillis;
  current.expiresAtMillis = Math.max(current.expiresAtMillis, m.nowMillis + current.ttlMillis); // never earlier
  return modelGrant(current, requestId);
}

/** A release; a retry of one of the last REPLAY_CACHE_SIZE releases (same resource, fence and holder) is `ok` again. */
function modelRelease(m: Model, resource: string, holderId: string, fence: number): Plain {
  m.sentReleases.push({ resource, holderId, fence });
  const current = modelStanding(m, resource, holderId, fence);
  if (typeof current === 'string') {
    const retried = m.released.some((e) => e.resource === resource && e.holderId === holderId && e.fence === fence);
    return retried ? { ok: true } : { ok: false, reason: current };
  }
  dropLease(m, resource);
  m.released.push({ resource, holderId, fence });
  if (m.released.length > REPLAY_CACHE_SIZE) m.released.shift();
  return { ok: true };
}

/** Which fence a renew/release presents: near the current lease's, this resource's highest, or the fence counter. */
type FenceBasis = 'current' | 'resource' | 'issued';
const pickFence = (m: Model, resource: string, basis: FenceBasis, offset: number): number => {
  const base =
    basis === 'issued'
      ? m.issued
      : basis === 'resource'
        ? highestGranted(m, resource)
        : (findLease(m, resource)?.fence ?? m.issued);
  return Math.max(1, base + offset);
};

/** A fence answers exactly one acquire request, ever: never issued twice. */
const expectFenceNotReused = (m: Model, outcome: AcquireOutcome): void => {
  if (!outcome.ok) return;
  const owner = `${outcome.grant.holderId}/${outcome.grant.requestId}`;
  expect(m.fenceOwners.get(outcome.grant.fence) ?? owner).toBe(owner);
  m.fenceOwners.set(outcome.grant.fence, owner);
};

const expectSameState = (m: Model, r: Real): void => {
  expect(r.coordinator.issuedFence).toBe(m.issued);
  const realLeases = r.coordinator.leases().map((l) => ({
    resource: l.resource,
    holderId: l.holderId,
    fence: l.fence,
    ttlMillis: l.ttlMillis,
    requestId: l.requestId,
    expiresAtMillis: l.expiresAt.millis,
  }));
  const byResource = (a: { resource: string }, b: { resource: string }): number => a.resource.localeCompare(b.resource);
  expect(realLeases.sort(byResource)).toEqual([...m.leases].map((l) => ({ ...l })).sort(byResource));
};

// ---- commands --------------------------------------------------------------------------------

class AcquireCommand implements fc.Command<Model, Real> {
  constructor(
    readonly resource: string,
    readonly holderId: string,
    readonly ttlMillis: number | undefined,
  ) {}
  check = (): boolean => true;
  run(m: Model, r: Real): void {
    const requestId = `q${m.nextRequest++}`;
    const ttlMillis = this.ttlMillis ?? DEFAULT_TTL_MILLIS;
    m.sent.push({ holderId: this.holderId, requestId, resource: this.resource, ttlMillis });
    const expected = modelAcquire(m, this.resource, this.holderId, requestId, ttlMillis);
    const outcome = r.coordinator.acquire({
      resource: this.resource,
      holderId: this.holderId,
      requestId,
      ttlMillis: this.ttlMillis,
    });
    expect(plain(outcome)).toEqual(expected);
    expectFenceNotReused(m, outcome);
    expectSameState(m, r);
  }
  toString = (): string => `acquire(${this.resource}, ${this.holderId}, ${String(this.ttlMillis)})`;
}

/** Resends an earlier acquire request unchanged: a retry after a lost reply. */
class RetryCommand implements fc.Command<Model, Real> {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>): boolean => m.sent.length > 0;
  run(m: Model, r: Real): void {
    const sent = m.sent[this.pick % m.sent.length];
    if (sent === undefined) throw new Error('unreachable: check() guarantees a sent request');
    const expected = modelAcquire(m, sent.resource, sent.holderId, sent.requestId, sent.ttlMillis);
    const outcome = r.coordinator.acquire(sent);
    expect(plain(outcome)).toEqual(expected);
    if (outcome.ok) expect(outcome.grant.requestId).toBe(sent.requestId);
    expectFenceNotReused(m, outcome);
    expectSameState(m, r);
  }
  toString = (): string => `retry(#${this.pick})`;
}

class RenewCommand implements fc.Command<Model, Real> {
  constructor(
    readonly resource: string,
    readonly holderId: string,
    readonly basis: FenceBasis,
    readonly fenceOffset: number,
    readonly ttlMillis: number | undefined,
  ) {}
  check = (): boolean => true;
  run(m: Model, r: Real): void {
    const fence = pickFence(m, this.resource, this.basis, this.fenceOffset);
    const requestId = `q${m.nextRequest++}`;
    const expected = modelRenew(m, this.resource, this.holderId, fence, requestId, this.ttlMillis);
    const outcome = r.coordinator.renew({
      resource: this.resource,
      holderId: this.holderId,
      fence,
      requestId,
      ttlMillis: this.ttlMillis,
    });
    expect(plain(outcome)).toEqual(expected);
    expectSameState(m, r);
  }
  toString = (): string =>
    `renew(${this.resource}, ${this.holderId}, ${this.basis}${this.fenceOffset >= 0 ? '+' : ''}${this.fenceOffset}, ${String(this.ttlMillis)})`;
}

class ReleaseCommand implements fc.Command<Model, Real> {
  constructor(
    readonly resource: string,
    readonly holderId: string,
    readonly basis: FenceBasis,
    readonly fenceOffset: number,
  ) {}
  check = (): boolean => true;
  run(m: Model, r: Real): void {
    const fence = pickFence(m, this.resource, this.basis, this.fenceOffset);
    const expected = modelRelease(m, this.resource, this.holderId, fence);
    expect(plain(r.coordinator.release({ resource: this.resource, holderId: this.holderId, fence }))).toEqual(expected);
    expectSameState(m, r);
  }
  toString = (): string =>
    `release(${this.resource}, ${this.holderId}, ${this.basis}${this.fenceOffset >= 0 ? '+' : ''}${this.fenceOffset})`;
}

/** Resends an earlier release request unchanged: a retry after a lost reply. */
class RetryReleaseCommand implements fc.Command<Model, Real> {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>): boolean => m.sentReleases.length > 0;
  run(m: Model, r: Real): void {
    const sent = m.sentReleases[this.pick % m.sentReleases.length];
    if (sent === undefined) throw new Error('unreachable: check() guarantees a sent release');
    const expected = modelRelease(m, sent.resource, sent.holderId, sent.fence);
    expect(plain(r.coordinator.release({ ...sent }))).toEqual(expected);
    expectSameState(m, r);
  }
  toString = (): string => `retryRelease(#${this.pick})`;
}

class AdvanceCommand implements fc.Command<Model, Real> {
  constructor(readonly millis: number) {}
  check = (): boolean => true;
  run(m: Model, r: Real): void {
    m.nowMillis += this.millis;
    r.clock.advance(this.millis);
  }
  toString = (): string => `advance(${this.millis})`;
}

class ExpireDueCommand implements fc.Command<Model, Real> {
  check = (): boolean => true;
  run(m: Model, r: Real): void {
    const due = m.leases.filter((l) => m.nowMillis >= l.expiresAtMillis);
    m.leases = m.leases.filter((l) => m.nowMillis < l.expiresAtMillis);
    expect(r.coordinator.expireDue()).toBe(due.length);
    expectSameState(m, r);
  }
  toString = (): string => 'expireDue()';
}

const resource = fc.constantFrom(...RESOURCES);
const holder = fc.constantFrom(...HOLDERS);
const ttl = fc.option(fc.integer({ min: 1, max: 300 }), { nil: undefined });
const basis = fc.constantFrom<FenceBasis>('current', 'resource', 'issued');
const commands = fc.commands(
  [
    fc.tuple(resource, holder, ttl).map(([res, h, t]) => new AcquireCommand(res, h, t)),
    fc.nat({ max: 1_000 }).map((pick) => new RetryCommand(pick)),
    fc
      .tuple(resource, holder, basis, fc.integer({ min: -2, max: 2 }), ttl)
      .map(([res, h, b, o, t]) => new RenewCommand(res, h, b, o, t)),
    fc
      .tuple(resource, holder, basis, fc.integer({ min: -1, max: 1 }))
      .map(([res, h, b, o]) => new ReleaseCommand(res, h, b, o)),
    fc.nat({ max: 1_000 }).map((pick) => new RetryReleaseCommand(pick)),
    fc.integer({ min: 1, max: 150 }).map((ms) => new AdvanceCommand(ms)),
    fc.constant(new ExpireDueCommand()),
  ],
  { maxCommands: 60, size: 'max' },
);

describe('LeaseCoordinator (model-based)', () => {
  it(`agrees with a naive model on every outcome, the fence counter and the current leases, and never reissues a fence (seed ${seed})`, () => {
    fc.assert(
      fc.property(commands, (cmds) => {
        const setup = (): { model: Model; real: Real } => {
          const clock = createManualClock('coordinator');
          return {
            model: {
              nowMillis: 0,
              issued: 0,
              granted: [],
              leases: [],
              replay: [],
              sent: [],
              released: [],
              sentReleases: [],
              nextRequest: 0,
              fenceOwners: new Map(),
            },
            real: {
              clock,
              coordinator: new LeaseCoordinator({
                clock,
                ttlMillis: DEFAULT_TTL_MILLIS,
                replayCacheSize: REPLAY_CACHE_SIZE,
              }),
            },
          };
        };
        fc.modelRun(setup, cmds);
      }),
      { seed, numRuns: 300 },
    );
  });
});
