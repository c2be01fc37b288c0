/**
 * Forwards a resource's refusals to the coordinator from the gate's durable outbox: in `seq`
 * order, one at a time, each retried until the coordinator acknowledges it (outages of any
 * length), then removed from the outbox durably. The coordinator deduplicates a resend (after a
 * lost reply, or a crash between its acknowledgement and ours) by (gate, resource, seq), so each
 * refusal is in its log exactly once. After the gate process restarts, a new reporter resumes
 * from the outbox.
 *
 * @see docs/design.md § "The library's rules" (FenceGate: a rejection has a sequence number)
 */
import type { PendingRejection, RejectionOutbox } from './floor-store.js';
import { CoordinatorHttpError } from './errors.js';
import { linkSignals } from './linked-signal.js';
import { backoffDelayMillis, createRetryPolicy, type RetryOptions } from './retry-policy.js';
import { systemTimers, type Timers } from './timers.js';

/** Where the reporter sends refusals: a {@link FenceGateClient}. */
export interface RejectionSink {
  reportRejection(
    rejection: PendingRejection,
    options: { readonly wallMillis?: number; readonly signal?: AbortSignal },
  ): Promise<unknown>;
}

/** Options of {@link reportRejections}. */
export interface RejectionReporterOptions {
  /**
   * How often the outbox is checked when it announces nothing, in milliseconds. Integer ≥ 1.
   * @defaultValue 1000
   */
  readonly pollIntervalMillis?: number;
  /** Backoff between failed reports (after the client's own retries). @defaultValue `{ initialDelayMillis: 200, maxDelayMillis: 5000 }` */
  readonly retry?: Omit<RetryOptions, 'maxAttempts'>;
  /** How the reporter waits. @defaultValue {@link systemTimers} */
  readonly timers?: Timers;
  /** Called after the coordinator acknowledged a refusal and the outbox recorded it. */
  readonly onReported?: (rejection: PendingRejection) => void;
  /**
   * Called when a report failed. It is retried, unless the refusal is final (see
   * {@link isFinalRefusal}): then it is dropped from the outbox and counted in `dropped` (the
   * coordinator then records the seq as missing when the next one arrives).
   */
  readonly onError?: (error: unknown, rejection: PendingRejection) => void;
}

/**
 * Whether the coordinator refused a report for good, so resending the same record can never
 * succeed: 400 (an implausible or malformed report) or 409 `seq-conflict` (that seq was already
 * recorded with other content — e.g. a gate that restarted without its persisted `nextSeq`).
 * Everything else (network errors, timeouts, 503, and 401/403: a token the coordinator does not
 * know, or one that does not cover the resource, which its tokens file may yet) is retried: the
 * writer was told its write was refused, so the refusal stays in the outbox until the log has it.
 */
export const isFinalRefusal = (error: unknown): boolean =>
  error instanceof CoordinatorHttpError &&
  (error.status === 400 ||
    (error.status === 409 &&
      typeof error.body === 'object' &&
      error.body !== null &&
      (error.body as { reason?: unknown }).reason === 'seq-conflict'));

/** A running reporter: see {@link reportRejections}. */
export interface RejectionReporter {
  /** Wakes the reporter now (the outbox's `onPending` already does). */
  notify(): void;
  /** Resolves once every refusal pending in the outbox now has been acknowledged. Rejects if closed first. */
  flush(): Promise<void>;
  /** Stops reporting (an in-flight report is aborted; it stays in the outbox for the next reporter). */
  close(): Promise<void>;
  /** Every refusal with `seq` at or below this was acknowledged (the outbox's durable position). */
  readonly reportedThroughSeq: number;
  /** Refusals the coordinator refused for good (400, 409 seq-conflict), dropped from the outbox. */
  readonly dropped: number;
}

/**
 * Starts draining `outbox` to the coordinator through `client`, in `seq` order: a refusal is
 * retried until acknowledged, then acknowledged in the outbox (durably) before the next is sent.
 * A refusal acknowledged by the outbox is never sent again, also after a restart.
 *
 * @throws RangeError on a bad `pollIntervalMillis` or `retry`.
 * @example
 * ```ts
 * const store = await openFileFloorStore({ path: 'data/deploy-slot-a.floor.json', resource: 'deploy-slot-a' });
 * const reporter = reportRejections(store, new FenceGateClient({ baseUrl, token: gateToken }));
 * ```
 */
export const reportRejections = (
  outbox: RejectionOutbox,
  client: RejectionSink,
  options: RejectionReporterOptions = {},
): RejectionReporter => {
  const api = 'reportRejections';
  const pollIntervalMillis = options.pollIntervalMillis ?? 1000;
  if (!Number.isSafeInteger(pollIntervalMillis) || pollIntervalMillis < 1) {
    throw new RangeError(
      `${api}: pollIntervalMillis must be a positive integer (milliseconds), got ${String(pollIntervalMillis)}`,
    );
  }
  const backoff = createRetryPolicy(api, { initialDelayMillis: 200, maxDelayMillis: 5000, ...options.retry });
  const timers = options.timers ?? systemTimers;
  const stop = new AbortController();
  let wake: AbortController = new AbortController();
  let dropped = 0;
  let flushWaiters: { throughSeq: number; resolve: () => void; reject: (error: unknown) => void }[] = [];

  const pending = (): readonly PendingRejection[] =>
    outbox.pendingRejections().filter((record) => record.seq > outbox.reportedThroughSeq);
  const settleFlushes = (): void => {
    const waiting = flushWaiters;
    flushWaiters = waiting.filter((waiter) => waiter.throughSeq > outbox.reportedThroughSeq);
    for (const waiter of waiting) if (waiter.throughSeq <= outbox.reportedThroughSeq) waiter.resolve();
  };

  const run = async (): Promise<void> => {
    let failures = 0;
    while (!stop.signal.aborted) {
      const next = pending()[0];
      if (next === undefined) {
        const current = wake;
        const woken = linkSignals(stop.signal, current.signal);
        await timers.sleep(pollIntervalMillis, woken.signal).catch(() => undefined);
        woken.dispose();
        if (current === wake && current.signal.aborted) wake = new AbortController();
        continue;
      }
      let final = false;
      try {
        await client.reportRejection(next, { signal: stop.signal, wallMillis: next.wallMillis });
      } catch (error) {
        if (stop.signal.aborted) return;
        safely(() => options.onError?.(error, next));
        final = isFinalRefusal(error);
        if (!final) {
          failures += 1;
          await timers.sleep(backoffDelayMillis(backoff, failures), stop.signal).catch(() => undefined);
          continue;
        }
      }
      try {
        await outbox.acknowledgeRejections(next.seq);
      } catch (error) {
        // The outbox could not record it: resend later (the coordinator answers duplicate).
        safely(() => options.onError?.(error, next));
        failures += 1;
        await timers.sleep(backoffDelayMillis(backoff, failures), stop.signal).catch(() => undefined);
        continue;
      }
      failures = 0;
      if (final) dropped += 1;
      else safely(() => options.onReported?.(next));
      settleFlushes();
    }
  };
  const unsubscribe = outbox.onPending(() => wake.abort());
  const running = run();

  return {
    notify() {
      wake.abort();
    },
    flush() {
      if (stop.signal.aborted) return Promise.reject(new Error('reportRejections: the reporter is closed'));
      const throughSeq = pending().at(-1)?.seq ?? 0;
      if (throughSeq <= outbox.reportedThroughSeq) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        flushWaiters.push({ throughSeq, resolve, reject });
        wake.abort();
      });
    },
    async close() {
      if (!stop.signal.aborted) stop.abort(new Error('reportRejections: closed'));
      unsubscribe();
      for (const waiter of flushWaiters)
        waiter.reject(new Error('reportRejections: closed before every rejection was acknowledged'));
      flushWaiters = [];
      await running;
    },
    get reportedThroughSeq() {
      return outbox.reportedThroughSeq;
    },
    get dropped() {
      return dropped;
    },
  };
};

const safely = (fn: () => void): void => {
  try {
    fn();
  } catch {
    // observers never change what is reported
  }
};
