/**
 * Test double: the in-memory EventLog ({@link createMemoryEventLog}, the port's reference
 * semantics) with controls a test needs to observe the coordinator shell's group commit and
 * persist-before-ack: it can hold appends, count them, and see the stored records. Everything
 * else is the memory log itself, which passes the EventLog contract
 * (`../ports/memory-event-log.spec.ts`); `recordedAtMillis` is always 0 here, so runs are
 * deterministic. Applications use `createMemoryEventLog` from `@lease-fence/coordinator-core`.
 */
import {
  createMemoryEventLog,
  createMemoryEventLogContents,
  type MemoryEventLog,
  type MemoryEventLogContents,
} from '../ports/memory-event-log.js';

/**
 * Storage shared by test logs opened on it (a second writer, a reopen), with its records and
 * snapshots visible so a test can copy them (a restart on a copy) or rewrite one (a corrupt log).
 */
export type TestEventLogStorage = MemoryEventLogContents;

/** The test double's controls, beside the memory log's (including `failNextAppend`). */
export interface TestEventLog extends MemoryEventLog {
  readonly storage: TestEventLogStorage;
  /** Appends called on this handle so far (landed or not). */
  readonly appendCalls: number;
  /** Events per landed append on this handle, in order. */
  readonly appendSizes: readonly number[];
  /**
   * Holds every append from now on: each waits (before its version check) until `release()`.
   * Returns the release function; the number of waiting appends is `heldAppends`.
   */
  holdAppends(): () => void;
  /** Appends currently waiting on {@link TestEventLog.holdAppends}. */
  readonly heldAppends: number;
  /** Resolves once at least `count` appends are waiting on {@link TestEventLog.holdAppends}. */
  whenAppendsHeld(count: number): Promise<void>;
}

/** Creates empty storage to share between test logs. */
export const createTestEventLogStorage = (): TestEventLogStorage => createMemoryEventLogContents();

/** Opens a test log on `storage` (fresh storage by default). */
export function createTestEventLog(storage: TestEventLogStorage = createTestEventLogStorage()): TestEventLog {
  const log = createMemoryEventLog({ storage, wallClock: () => 0 });
  let calls = 0;
  const sizes: number[] = [];
  let held: Promise<void> | undefined;
  let waiting = 0;
  const heldWaiters: { count: number; resolve: () => void }[] = [];
  let turn: Promise<unknown> = Promise.resolve();

  // The memory log is a plain object of closures (no `this`, no getters): spreading it delegates.
  return {
    ...log,
    storage,
    get appendCalls() {
      return calls;
    },
    get appendSizes() {
      return sizes;
    },
    get heldAppends() {
      return waiting;
    },
    whenAppendsHeld(count) {
      if (waiting >= count) return Promise.resolve();
      return new Promise((resolve) => heldWaiters.push({ count, resolve }));
    },
    holdAppends() {
      let release!: () => void;
      held = new Promise((resolve) => (release = resolve));
      return () => {
        held = undefined;
        release();
      };
    },
    async append(events, options) {
      calls += 1;
      // Appends stay in call order across a hold (the memory log's `appendsInCallOrder`): each
      // one waits for the one called before it, then for its own hold.
      const gate = held;
      const previous = turn;
      const applied = (async () => {
        if (gate !== undefined) {
          waiting += 1;
          for (const waiter of heldWaiters.filter((w) => waiting >= w.count)) {
            heldWaiters.splice(heldWaiters.indexOf(waiter), 1);
            waiter.resolve();
          }
          await gate;
          waiting -= 1;
        }
        await previous;
        return log.append(events, options);
      })();
      turn = applied.catch(() => undefined);
      const result = await applied;
      sizes.push(result.toPosition - result.fromPosition + 1);
      return result;
    },
  };
}
