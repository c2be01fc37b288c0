import type { CoordinatorEvent } from '@lease-fence/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acquire, at, foldEvents, release, renew, startCoordinator } from '../testing/decider-specification.js';
import type { CoordinatorCommand } from './commands.js';
import { decide } from './decide.js';
import { evolve } from './evolve.js';
import { type CoordinatorState, createInitialState, fromSnapshot, toSnapshot } from './state.js';

const seed = process.env['FC_SEED'] === undefined ? undefined : Number(process.env['FC_SEED']);
const runs = { numRuns: 200, ...(seed === undefined ? {} : { seed }) };

const resources = ['slot-a', 'slot-b'];
const holders = ['agent-a', 'agent-b', 'agent-c'];

/** One step of a random workload: a command and how long after the previous step it comes. */
const stepArbitrary = fc.record({
  afterMillis: fc.integer({ min: 0, max: 4000 }),
  wallMillis: fc.integer({ min: 0, max: 2 ** 45 }),
  kind: fc.constantFrom('acquire', 'renew', 'release', 'expire', 'checkpoint'),
  resource: fc.constantFrom(...resources),
  holder: fc.constantFrom(...holders),
  request: fc.integer({ min: 0, max: 5 }),
  fence: fc.integer({ min: 1, max: 8 }),
  ttlMillis: fc.integer({ min: 1, max: 6000 }),
  lockDelayMillis: fc.constantFrom(0, 2500),
});
type Step = typeof stepArbitrary extends fc.Arbitrary<infer T> ? T : never;

/**
 * The command of `step` in `state`. Half the releases present the resource's current lease (its
 * holder and fence), so releases that apply are common; the rest present random tokens.
 */
const commandOf = (step: Step, state: CoordinatorState): CoordinatorCommand => {
  switch (step.kind) {
    case 'acquire':
      return {
        ...acquire(step.resource, step.holder, `${step.resource}/${step.holder}/${step.request}`, step.ttlMillis),
        lockDelayMillis: step.lockDelayMillis,
      };
    case 'renew':
      return renew(step.resource, step.holder, step.fence, `renew-${step.request}`, step.ttlMillis);
    case 'release': {
      const current = step.request % 2 === 0 ? state.table.lease(step.resource) : undefined;
      return current === undefined
        ? release(step.resource, step.holder, step.fence)
        : release(step.resource, current.holderId, current.fence);
    }
    case 'expire':
      return { type: 'ExpireDueLeases' };
    default:
      return { type: 'Checkpoint' };
  }
};

/** Runs `steps` live (decide, then evolve the decided events) and returns the log and the outcomes. */
function runLive(steps: readonly Step[], wallOf: (step: Step) => number) {
  const state = createInitialState();
  const log: CoordinatorEvent[] = [];
  const outcomes: unknown[] = [];
  let millis = 0;
  const apply = (command: CoordinatorCommand, wallMillis: number): void => {
    const { events, outcome } = decide(command, state, at(millis, { wallMillis }));
    events.forEach((event) => evolve(state, event));
    log.push(...events);
    outcomes.push(outcome);
  };
  apply(startCoordinator(), 0);
  for (const step of steps) {
    millis += step.afterMillis;
    apply(commandOf(step, state), wallOf(step));
  }
  return { state, log, outcomes };
}

const withoutWall = (events: readonly CoordinatorEvent[]) =>
  events.map((event) => ({ ...event, data: { ...event.data, wallMillis: 0 } }));

describe('decider properties', () => {
  it("wall time never decides: only the events' wall fields differ when only wall time differs", () => {
    fc.assert(
      fc.property(fc.array(stepArbitrary, { maxLength: 60 }), (steps) => {
        const first = runLive(steps, (step) => step.wallMillis);
        const second = runLive(steps, (step) => (step.wallMillis * 7 + 13) % 2 ** 45);
        expect(withoutWall(second.log)).toEqual(withoutWall(first.log));
        expect(second.outcomes).toEqual(first.outcomes);
      }),
      runs,
    );
  });

  it('fences of grants strictly increase and each resource has at most one current lease', () => {
    fc.assert(
      fc.property(fc.array(stepArbitrary, { maxLength: 80 }), (steps) => {
        const { log } = runLive(steps, () => 0);
        const fences = log.flatMap((event) => (event.type === 'LeaseGranted' ? [event.data.fence] : []));
        fences.forEach((fence, index) => index > 0 && expect(fence).toBeGreaterThan(fences[index - 1]!));
        const holding = new Map<string, number>();
        for (const event of log) {
          if (event.type === 'LeaseGranted') {
            expect(holding.has(event.data.resource)).toBe(false);
            holding.set(event.data.resource, event.data.fence);
          }
          if (event.type === 'LeaseExpired' || event.type === 'LeaseReleased') {
            expect(holding.get(event.data.resource)).toBe(event.data.fence);
            holding.delete(event.data.resource);
          }
        }
      }),
      runs,
    );
  });

  it('a release that was applied answers ok again when retried later, with no event, live, replayed or restored from a snapshot', () => {
    fc.assert(
      fc.property(
        fc.array(stepArbitrary, { maxLength: 80 }),
        fc.integer({ min: 0, max: 4000 }),
        (steps, laterMillis) => {
          const { state, log } = runLive(steps, () => 0);
          const released = log.flatMap((event) => (event.type === 'LeaseReleased' ? [event.data] : []));
          const snapshot = JSON.parse(JSON.stringify(toSnapshot(state))) as ReturnType<typeof toSnapshot>;
          const endMillis = steps.reduce((millis, step) => millis + step.afterMillis, 0) + laterMillis;
          for (const restarted of [state, foldEvents(log), fromSnapshot(snapshot)!]) {
            for (const { resource, holderId, fence } of released) {
              expect(decide(release(resource, holderId, fence), restarted, at(endMillis))).toEqual({
                events: [],
                outcome: { ok: true },
              });
            }
          }
        },
      ),
      runs,
    );
  });

  it('replaying the log, from the start or from a snapshot at any position, gives the live state', () => {
    fc.assert(
      fc.property(fc.array(stepArbitrary, { maxLength: 60 }), fc.nat(), (steps, cut) => {
        const { state, log } = runLive(steps, (step) => step.wallMillis);
        expect(toSnapshot(foldEvents(log))).toEqual(toSnapshot(state));
        const position = cut % (log.length + 1);
        const snapshot = JSON.parse(JSON.stringify(toSnapshot(foldEvents(log.slice(0, position))))) as ReturnType<
          typeof toSnapshot
        >;
        const resumed = log.slice(position).reduce(evolve, fromSnapshot(snapshot)!);
        expect(toSnapshot(resumed)).toEqual(toSnapshot(state));
      }),
      runs,
    );
  });
});
