/**
 * Given/when/then for the decider, in the style of emmett's `DeciderSpecification`:
 * `given(events).at(now).when(command).then({ events, outcome })`. The given events are folded
 * with `evolve` (so they must begin with `CoordinatorStarted`); `then` also checks that `decide`
 * left the state untouched. Test support, not production code.
 */
import type { CoordinatorEvent } from '@lease-fence/protocol';
import { Instant } from 'lease-fence';
import { expect } from 'vitest';
import type {
  AcquireLease,
  CoordinatorCommand,
  Now,
  OutcomeOf,
  ReleaseLease,
  RenewLease,
  StartCoordinator,
} from '../decider/commands.js';
import { decide, type Decision } from '../decider/decide.js';
import { evolve } from '../decider/evolve.js';
import { createInitialState, toSnapshot, type CoordinatorState } from '../decider/state.js';

/** `now` at `millis` on boot `bootId` (default `'boot-1'`), wall time `wallMillis` (default 0). */
export const at = (millis: number, options: { readonly bootId?: string; readonly wallMillis?: number } = {}): Now => ({
  instant: Instant.of(millis, options.bootId ?? 'boot-1'),
  wallMillis: options.wallMillis ?? 0,
});

/** Folds `events` into a fresh state with `evolve`. */
export const foldEvents = (
  events: readonly CoordinatorEvent[],
  state: CoordinatorState = createInitialState(),
): CoordinatorState => events.reduce(evolve, state);

/** An `AcquireLease` command (ttl 10 000 ms unless given). */
export const acquire = (resource: string, holderId: string, requestId: string, ttlMillis = 10_000): AcquireLease => ({
  type: 'AcquireLease',
  resource,
  holderId,
  requestId,
  ttlMillis,
});

/** A `RenewLease` command. */
export const renew = (
  resource: string,
  holderId: string,
  fence: number,
  requestId = `renew-${fence}`,
  ttlMillis?: number,
): RenewLease => ({
  type: 'RenewLease',
  resource,
  holderId,
  fence,
  requestId,
  ...(ttlMillis === undefined ? {} : { ttlMillis }),
});

/** A `ReleaseLease` command. */
export const release = (resource: string, holderId: string, fence: number): ReleaseLease => ({
  type: 'ReleaseLease',
  resource,
  holderId,
  fence,
});

/** The `StartCoordinator` command of a fresh boot on an empty log in namespace `'default'` (nothing replayed, no fence burned). */
export const startCoordinator = (): StartCoordinator => ({
  type: 'StartCoordinator',
  namespace: 'default',
  eventsReplayed: 0,
  fromSnapshot: false,
  replayMillis: 0,
  burnFencesThrough: 0,
});

/** The expectation of a decision: the events (exactly) and, when given, the outcome. */
export interface DecisionExpectation<C extends CoordinatorCommand> {
  readonly events: readonly CoordinatorEvent[];
  readonly outcome?: OutcomeOf<C>;
}

/**
 * Starts a decider specification from the events already in the log.
 * @example
 * ```ts
 * given([started, granted]).at(at(10_000)).when(renew('slot', 'agent-a', 1)).then({ events: [renewed], outcome: {...} });
 * ```
 */
export function given(events: readonly CoordinatorEvent[]) {
  return {
    at: (now: Now) => ({
      when: <C extends CoordinatorCommand>(command: C) => ({
        /** Asserts the decision's events and outcome, and that decide did not change the state. */
        then(expected: DecisionExpectation<C>): Decision<OutcomeOf<C>> {
          const state = foldEvents(events);
          const before = JSON.stringify(toSnapshot(state));
          const decision = decide(command, state, now);
          expect(decision.events).toEqual(expected.events);
          if (expected.outcome !== undefined) expect(decision.outcome).toEqual(expected.outcome);
          expect(JSON.stringify(toSnapshot(state))).toBe(before);
          return decision;
        },
        /** Asserts that deciding throws (matched as vitest's `toThrow` does) and changes nothing. */
        thenThrows(expected: string | RegExp | (abstract new (...args: never[]) => Error)): void {
          const state = foldEvents(events);
          const before = JSON.stringify(toSnapshot(state));
          expect(() => decide(command, state, now)).toThrow(expected);
          expect(JSON.stringify(toSnapshot(state))).toBe(before);
        },
      }),
    }),
  };
}
