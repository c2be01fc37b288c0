/**
 * The rule every log that declares `appendsInCallOrder` (`./event-log.ts`) keeps: **after an append
 * fails, every append called before its caller could see that failure is refused unwritten.**
 *
 * Why: a pipelining writer decides append n+1 on the state that includes append n, and expects
 * the version after n. If n fails because another coordinator appended first, and that writer
 * appended exactly as many events as n held, n+1's expected version matches the log and it would
 * land on top of the other coordinator's events: a log whose recovery then refuses it (an event
 * of one boot after another boot started). The simulation found it (`npm run simulate --
 * --scenario standby-takeover`, `test/simulation/`); the SQLite writer thread keeps the same rule
 * across its thread boundary with epochs of its own (`libs/event-log-sqlite/src/writer-thread.ts`).
 *
 * How: each append takes the current epoch when it is called. A failure refuses every append of
 * its epoch, and moves the epoch on in a microtask queued at the failure, so it runs before the
 * caller's own reaction to the rejection: appends called in the same turn as the failed one (a
 * pipelined batch) are refused, appends called after the caller saw it are not.
 */
import { EventLogUnavailableError } from './event-log-errors.js';

/** One log handle's epochs of appends (see the file header). */
export class AppendFailureBarrier {
  #epoch = 0;
  #refusedThroughEpoch = -1;

  /** @param logName - the adapter's name, for the refusal's message (`EventLog.name`). */
  constructor(private readonly logName: string) {}

  /** The epoch of an append called now: pass it to {@link refusal} and {@link failed}. */
  enter(): number {
    return this.#epoch;
  }

  /**
   * Call when the append of `epoch` is about to be applied.
   * @returns the {@link EventLogUnavailableError} to reject it with, unwritten, when an append of
   *   the same epoch failed (this one was decided before that failure was seen); `undefined` when
   *   it may be applied.
   */
  refusal(epoch: number): EventLogUnavailableError | undefined {
    if (epoch > this.#refusedThroughEpoch) return undefined;
    return new EventLogUnavailableError(this.logName, {
      message: 'append refused: an earlier append failed, and this one was called before that failure was seen',
    });
  }

  /** Records that the append of `epoch` failed (a conflict or a store error): call before rejecting it. */
  failed(epoch: number): void {
    this.#refusedThroughEpoch = Math.max(this.#refusedThroughEpoch, epoch);
    queueMicrotask(() => {
      this.#epoch = Math.max(this.#epoch, epoch + 1);
    });
  }
}
