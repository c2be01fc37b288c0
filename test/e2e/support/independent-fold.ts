/**
 * An independent fold of `/v1/events` for the browser suites' honesty checks: "who held what as
 * of position P" computed without `@lease-fence/dashboard-model`, so the page's tables are
 * compared with a second implementation rather than with the fold they were drawn from.
 *
 * Which leases are current comes from the coordinator's own decider (`createInitialState` and
 * `evolve` of `@lease-fence/coordinator-core`: what the service itself folds on recovery, and
 * which throws on a log that contradicts itself). This file adds only what the decider does not
 * keep for display: each lease's grant (position and wall time), its renewals, and the pair of
 * clock readings of the event that last set its expiry, to project that monotonic expiry to the
 * wall clock (`wall + (expiresAt - at)` of that event).
 */
import { createInitialState, evolve, leasesOf, type CoordinatorState } from '@lease-fence/coordinator-core';
import type { RecordedEvent } from '@lease-fence/protocol';

/** One current lease as of a position, as the coordinator's decider and the raw events say. */
export interface IndependentHolder {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  /** Position of its `LeaseGranted`. */
  readonly grantPosition: number;
  /** Coordinator wall time of its `LeaseGranted`, epoch milliseconds. */
  readonly grantedWallMillis: number;
  /** `LeaseRenewed` events of this generation up to the position. */
  readonly renewals: number;
  /** The decider's expiry: monotonic milliseconds in `bootId`'s clock domain (the truth). */
  readonly expiresAtMillis: number;
  readonly bootId: string;
  /** That expiry projected to the coordinator's wall clock from the event that set it, epoch milliseconds. */
  readonly expiresAtWallMillis: number;
  /** Carried across the latest restart and not renewed since (the decider's grace flag). */
  readonly inGrace: boolean;
}

/** The independent fold of positions 1 … `position`. */
export interface IndependentFold {
  readonly position: number;
  /** Wall time of the event at `position`, epoch milliseconds; undefined at position 0. */
  readonly wallMillis: number | undefined;
  /** Current leases by resource. */
  readonly holders: ReadonlyMap<string, IndependentHolder>;
  /** The coordinator decider's state at `position` (read-only for callers). */
  readonly state: CoordinatorState;
}

interface Anchor {
  readonly wallMillis: number;
  readonly atMillis: number;
}

interface GrantFacts {
  readonly fence: number;
  readonly position: number;
  readonly wallMillis: number;
  renewals: number;
  anchor: Anchor;
}

/**
 * Folds `events` (positions 1, 2, … without gaps, as `/v1/events` serves them) with the
 * coordinator's decider and reads its current leases.
 *
 * @throws the decider's `EventLogCorruptError` when the log contradicts itself; Error when a
 *   current lease has no `LeaseGranted` among `events` (a log that does not start at position 1).
 */
export function foldIndependently(events: readonly RecordedEvent[]): IndependentFold {
  const state = createInitialState();
  const grants = new Map<string, GrantFacts>();
  for (const recorded of events) {
    const { event } = recorded;
    evolve(state, event);
    const anchor = { wallMillis: event.data.wallMillis, atMillis: event.data.atMillis };
    switch (event.type) {
      case 'LeaseGranted':
        grants.set(event.data.resource, {
          fence: event.data.fence,
          position: recorded.position,
          wallMillis: event.data.wallMillis,
          renewals: 0,
          anchor,
        });
        break;
      case 'LeaseRenewed': {
        const facts = grants.get(event.data.resource);
        if (facts !== undefined && facts.fence === event.data.fence) {
          facts.renewals += 1;
          facts.anchor = anchor;
        }
        break;
      }
      case 'CoordinatorStarted':
        // A carried lease's expiry is re-anchored in the new boot, at this event's readings.
        for (const carried of event.data.carriedLeases) {
          const facts = grants.get(carried.resource);
          if (facts !== undefined && facts.fence === carried.fence) facts.anchor = anchor;
        }
        break;
      default:
        break;
    }
  }
  const holders = new Map<string, IndependentHolder>();
  for (const lease of leasesOf(state)) {
    const facts = grants.get(lease.resource);
    if (facts === undefined || facts.fence !== lease.fence)
      throw new Error(`foldIndependently: no LeaseGranted of fence ${lease.fence} on ${lease.resource} in the events`);
    holders.set(lease.resource, {
      resource: lease.resource,
      holderId: lease.holderId,
      fence: lease.fence,
      grantPosition: facts.position,
      grantedWallMillis: facts.wallMillis,
      renewals: facts.renewals,
      expiresAtMillis: lease.expiresAt.millis,
      bootId: lease.expiresAt.domain,
      expiresAtWallMillis: facts.anchor.wallMillis + (lease.expiresAt.millis - facts.anchor.atMillis),
      inGrace: lease.inGrace,
    });
  }
  const last = events[events.length - 1];
  return { position: last?.position ?? 0, wallMillis: last?.event.data.wallMillis, holders, state };
}

/**
 * The position a wall time names: the end of the longest prefix of the log whose events all have a
 * coordinator wall time at or before `wallMillis` (0 when none), by a plain scan. (A wall clock that
 * stepped back cannot pull the answer back into the log.)
 *
 * @param events - Positions 1, 2, … in order.
 */
export function positionAtWall(events: readonly RecordedEvent[], wallMillis: number): number {
  let position = 0;
  for (const recorded of events) {
    if (recorded.event.data.wallMillis > wallMillis) break;
    position = recorded.position;
  }
  return position;
}
