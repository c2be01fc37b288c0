/**
 * `evolve` hands each lease event's data to the lease table as numbers (`LeaseTable.grant`,
 * `renew`, `end`: no change object, no `Instant`, no record until one is read). This checks,
 * over arbitrary logs with restarts, that the table it builds is the one a plain fold builds:
 * records with their `Instant`s made at every event, written apart from the table's code.
 */
import type { CoordinatorEvent } from '@lease-fence/protocol';
import fc from 'fast-check';
import { Instant } from 'lease-fence';
import { describe, expect, it } from 'vitest';
import { acquire, at, foldEvents, release, renew, startCoordinator } from '../testing/decider-specification.js';
import type { CoordinatorCommand } from './commands.js';
import { decide } from './decide.js';
import { evolve } from './evolve.js';
import { createInitialState } from './state.js';

const seed = process.env['FC_SEED'] === undefined ? undefined : Number(process.env['FC_SEED']);
const runs = { numRuns: 300, ...(seed === undefined ? {} : { seed }) };

const resources = ['slot-a', 'slot-b', 'slot-c'];
const holders = ['agent-a', 'agent-b'];

const stepArbitrary = fc.record({
  afterMillis: fc.integer({ min: 0, max: 4000 }),
  kind: fc.constantFrom('acquire', 'acquire', 'renew', 'renew', 'release', 'expire', 'restart'),
  resource: fc.constantFrom(...resources),
  holder: fc.constantFrom(...holders),
  request: fc.integer({ min: 0, max: 3 }),
  fence: fc.integer({ min: 1, max: 10 }),
  ttlMillis: fc.integer({ min: 1, max: 6000 }),
});
type Step = typeof stepArbitrary extends fc.Arbitrary<infer T> ? T : never;

const commandOf = (step: Step): CoordinatorCommand => {
  switch (step.kind) {
    case 'acquire':
      return acquire(step.resource, step.holder, `${step.resource}/${step.holder}/${step.request}`, step.ttlMillis);
    case 'renew':
      return renew(step.resource, step.holder, step.fence, `renew-${step.request}`, step.ttlMillis);
    case 'release':
      return release(step.resource, step.holder, step.fence);
    case 'expire':
      return { type: 'ExpireDueLeases' };
    default:
      return startCoordinator();
  }
};

/** The log a live coordinator writes for `steps`: each `restart` is a new boot (a new clock domain, its clock from 0). */
function logOf(steps: readonly Step[]): CoordinatorEvent[] {
  const state = createInitialState();
  const log: CoordinatorEvent[] = [];
  let boot = 1;
  let millis = 0;
  const run = (command: CoordinatorCommand): void => {
    const { events } = decide(command, state, at(millis, { bootId: `boot-${boot}` }));
    for (const event of events) evolve(state, event);
    log.push(...events);
  };
  run(startCoordinator());
  for (const step of steps) {
    if (step.kind === 'restart') {
      boot += 1;
      millis = step.afterMillis;
    } else millis += step.afterMillis;
    run(commandOf(step));
  }
  return log;
}

interface PlainLease {
  resource: string;
  holderId: string;
  fence: number;
  ttlMillis: number;
  requestId: string;
  grantedAt: Instant;
  expiresAt: Instant;
}
type PlainEntry = { holderId: string; requestId: string; resource: string; fence: number };

/**
 * The plain fold of the log's lease events, written here apart from `LeaseTable` (so a slip in
 * the table's code cannot hide in both): plain records with `Instant`s made for every event, the
 * replay caches as ordered maps and the releases as a list (the workload stays below their capacity), each boot's start as
 * `evolve` applies it. Returns the table's value in `LeaseTable.toJSON` form and its records.
 */
function plainFold(log: readonly CoordinatorEvent[]): { json: unknown; leases: PlainLease[] } {
  let issuedFence = 0;
  const current = new Map<string, PlainLease>();
  const highest = new Map<string, number>();
  const acquisitions = new Map<string, PlainEntry>();
  const renewals = new Map<string, PlainEntry>();
  const releases: { resource: string; holderId: string; fence: number }[] = [];
  const remember = (cache: Map<string, PlainEntry>, entry: PlainEntry): void => {
    const key = JSON.stringify([entry.holderId, entry.requestId]);
    cache.delete(key);
    cache.set(key, entry);
  };
  for (const event of log) {
    switch (event.type) {
      case 'CoordinatorStarted':
        issuedFence = Math.max(issuedFence, event.data.recoveredFence);
        for (const carried of event.data.carriedLeases) {
          const lease = current.get(carried.resource)!;
          lease.grantedAt = Instant.of(event.data.atMillis, event.data.bootId);
          lease.expiresAt = Instant.of(carried.expiresAtMillis, event.data.bootId);
        }
        break;
      case 'LeaseGranted': {
        const { data } = event;
        current.set(data.resource, {
          resource: data.resource,
          holderId: data.holderId,
          fence: data.fence,
          ttlMillis: data.ttlMillis,
          requestId: data.requestId,
          grantedAt: Instant.of(data.atMillis, data.bootId),
          expiresAt: Instant.of(data.expiresAtMillis, data.bootId),
        });
        highest.set(data.resource, Math.max(highest.get(data.resource) ?? 0, data.fence));
        issuedFence = Math.max(issuedFence, data.fence);
        remember(acquisitions, {
          holderId: data.holderId,
          requestId: data.requestId,
          resource: data.resource,
          fence: data.fence,
        });
        break;
      }
      case 'LeaseRenewed': {
        const { data } = event;
        const lease = current.get(data.resource)!;
        expect([lease.fence, lease.holderId]).toEqual([data.fence, data.holderId]);
        lease.ttlMillis = data.ttlMillis;
        lease.expiresAt = Instant.of(data.expiresAtMillis, data.bootId);
        remember(renewals, {
          holderId: data.holderId,
          requestId: data.requestId,
          resource: data.resource,
          fence: data.fence,
        });
        break;
      }
      case 'LeaseReleased':
      case 'LeaseExpired':
        expect(current.get(event.data.resource)?.fence).toBe(event.data.fence);
        current.delete(event.data.resource);
        if (event.type === 'LeaseReleased') {
          releases.push({ resource: event.data.resource, holderId: event.data.holderId, fence: event.data.fence });
        }
        break;
      default:
        expect.fail(`the workload wrote ${event.type}, which this fold does not know`);
    }
  }
  const leases = [...current.values()];
  return {
    json: {
      format: 1,
      issuedFence,
      replayCacheSize: 1024,
      leases: leases.map((lease) => ({
        ...lease,
        grantedAt: lease.grantedAt.toJSON(),
        expiresAt: lease.expiresAt.toJSON(),
      })),
      replayCache: [...acquisitions.values()],
      renewalReplayCache: [...renewals.values()],
      releaseReplayCache: releases,
      highestFences: [...highest].map(([resource, fence]) => ({ resource, fence })),
    },
    leases,
  };
}

describe('evolve folds lease events into the table as the plain fold does', () => {
  it('gives the same table (leases, instants, fences, the replay caches and the releases) over arbitrary logs with restarts', () => {
    fc.assert(
      fc.property(fc.array(stepArbitrary, { maxLength: 80 }), fc.boolean(), (steps, readWhileFolding) => {
        const log = logOf(steps);
        const plain = plainFold(log);
        const state = createInitialState();
        for (const event of log) {
          evolve(state, event);
          // Reading a lease makes its record: a later change must not keep the stale one.
          if (readWhileFolding) for (const resource of resources) state.table.lease(resource);
        }
        expect(state.table.toJSON()).toEqual(plain.json);
        expect([...state.table.leases()]).toEqual(plain.leases);
        for (const resource of resources)
          expect(state.table.lease(resource)).toEqual(plain.leases.find((lease) => lease.resource === resource));
        expect(foldEvents(log).table.toJSON()).toEqual(plain.json);
      }),
      runs,
    );
  });
});
