/**
 * Send-time anchoring: over seeded random round trips (request delay, coordinator processing,
 * reply delay, clock-rate skew between holder and coordinator), the holder's deadline never
 * passes the coordinator's expiry.
 *
 * The client and the coordinator read different clocks (different domains, different origins,
 * different rates), so nothing here subtracts one from the other. Both are modelled on one
 * simulated timeline `T`; each instant is converted to `T` with its own clock's origin and rate,
 * and the comparison is made in that frame.
 *
 * Seeded: `FC_SEED` from the environment, or a fixed default; fast-check prints the seed and the
 * counterexample path on failure.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../time/manual-clock.js';
import type { Instant } from '../time/instant.js';
import { LeaseClient } from './lease-client.js';
import { LeaseCoordinator } from './lease-coordinator.js';
import type { Lease } from './lease.js';

const seed = Number(process.env['FC_SEED'] ?? 20_261_130);
const EPSILON_MILLIS = 1e-4; // float rounding of many `advance` calls on readings up to 1e7 ms

interface RoundTrip {
  readonly requestDelayMillis: number;
  readonly processingMillis: number;
  readonly replyDelayMillis: number;
  readonly pauseMillis: number;
}

interface Scenario {
  readonly ttlMillis: number;
  /** Largest clock-rate difference the holder assumes, as a fraction (0.01 = 1 %). */
  readonly maxDriftRate: number;
  /** Actual client clock rate relative to the coordinator's, within ±maxDriftRate. */
  readonly clientRate: number;
  readonly extraSkewMillis: number;
  readonly clientOriginMillis: number;
  readonly coordinatorOriginMillis: number;
  readonly trips: readonly RoundTrip[];
}

const scenarioArbitrary: fc.Arbitrary<Scenario> = fc
  .record({
    ttlMillis: fc.integer({ min: 100, max: 60_000 }),
    maxDriftRate: fc.double({ min: 0, max: 0.01, noNaN: true }),
    driftFraction: fc.double({ min: -1, max: 1, noNaN: true }),
    extraSkewMillis: fc.integer({ min: 0, max: 40 }),
    clientOriginMillis: fc.double({ min: 0, max: 1e7, noNaN: true }),
    coordinatorOriginMillis: fc.double({ min: 0, max: 1e7, noNaN: true }),
    trips: fc.array(
      fc.record({
        requestDelayMillis: fc.double({ min: 0, max: 1, noNaN: true }),
        processingMillis: fc.double({ min: 0, max: 1, noNaN: true }),
        replyDelayMillis: fc.double({ min: 0, max: 1, noNaN: true }),
        pauseMillis: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
      { minLength: 1, maxLength: 6 },
    ),
  })
  .map(({ ttlMillis, maxDriftRate, driftFraction, trips, ...rest }) => ({
    ...rest,
    ttlMillis,
    maxDriftRate,
    clientRate: 1 + driftFraction * maxDriftRate,
    // delays are drawn as fractions of the ttl, so slow round trips (even longer than the ttl) occur
    trips: trips.map((trip) => ({
      requestDelayMillis: trip.requestDelayMillis * ttlMillis * 0.6,
      processingMillis: trip.processingMillis * ttlMillis * 0.2,
      replyDelayMillis: trip.replyDelayMillis * ttlMillis * 0.8,
      pauseMillis: trip.pauseMillis * ttlMillis,
    })),
  }));

type Anchor = (args: {
  request: { sentAt: Instant };
  lease: Lease;
  receivedAt: Instant;
  ttlMillis: number;
  skewMillis: number;
}) => Instant;

/** The library's deadline, as LeaseClient computed it. */
const libraryDeadline: Anchor = ({ lease }) => lease.deadline;
/** The naive deadline: dated from when the reply arrived. */
const replyAnchoredDeadline: Anchor = ({ receivedAt, ttlMillis, skewMillis }) =>
  receivedAt.plus(ttlMillis - skewMillis);

/**
 * Runs the scenario; returns the worst `holderDeadline - coordinatorExpiry` on the shared
 * timeline (≤ 0 means the holder's window stayed inside the coordinator's).
 */
function worstOverrun(scenario: Scenario, anchor: Anchor): number {
  const clockSkewMillis = Math.ceil(scenario.ttlMillis * scenario.maxDriftRate) + scenario.extraSkewMillis;
  const coordinatorClock = createManualClock('coordinator', { start: scenario.coordinatorOriginMillis });
  const clientClock = createManualClock('agent-a', { start: scenario.clientOriginMillis });
  // The shared timeline T is coordinator milliseconds since the scenario started.
  const advance = (ms: number): void => {
    coordinatorClock.advance(ms);
    clientClock.advance(ms * scenario.clientRate);
  };
  const coordinatorToT = (at: Instant): number => at.millis - scenario.coordinatorOriginMillis;
  const clientToT = (at: Instant): number => (at.millis - scenario.clientOriginMillis) / scenario.clientRate;

  const coordinator = new LeaseCoordinator({ clock: coordinatorClock, ttlMillis: scenario.ttlMillis });
  let n = 0;
  const client = new LeaseClient({
    clock: clientClock,
    holderId: 'agent-a',
    clockSkewMillis,
    newRequestId: () => `r${++n}`,
  });
  let lease: Lease | undefined;
  let worst = Number.NEGATIVE_INFINITY;
  for (const trip of scenario.trips) {
    const request = lease === undefined ? client.beginAcquire('slot') : client.beginRenewal(lease);
    advance(trip.requestDelayMillis + trip.processingMillis);
    const outcome = request.kind === 'acquire' ? coordinator.acquire(request) : coordinator.renew(request);
    advance(trip.replyDelayMillis);
    if (outcome.ok) {
      const receivedAt = clientClock.now();
      lease =
        request.kind === 'acquire'
          ? client.completeAcquire(request, outcome.grant)
          : client.completeRenewal(request, outcome.grant);
      const deadline = anchor({
        request,
        lease,
        receivedAt,
        ttlMillis: outcome.grant.ttlMillis,
        skewMillis: clockSkewMillis,
      });
      worst = Math.max(worst, clientToT(deadline) - coordinatorToT(outcome.grant.coordinatorExpiresAt));
    } else {
      lease = undefined; // expired or held: acquire afresh next time
    }
    advance(trip.pauseMillis);
  }
  return worst;
}

describe('send-time anchoring', () => {
  it(`keeps the holder's deadline at or before the coordinator's expiry over 200 random round trips (seed ${seed})`, () => {
    fc.assert(
      fc.property(scenarioArbitrary, (scenario) => {
        expect(worstOverrun(scenario, libraryDeadline)).toBeLessThanOrEqual(EPSILON_MILLIS);
      }),
      { seed, numRuns: 200 },
    );
  });

  it(`finds a counterexample for a deadline dated from the reply, so the property can fail (seed ${seed})`, () => {
    const details = fc.check(
      fc.property(scenarioArbitrary, (scenario) => worstOverrun(scenario, replyAnchoredDeadline) <= EPSILON_MILLIS),
      { seed, numRuns: 200 },
    );
    expect(details.failed).toBe(true);
  });
});
