/**
 * Forwards a resource's {@link FenceGate} rejections to the coordinator: at least once, in `seq`
 * order, each `seq` acknowledged once on this side (the coordinator deduplicates retries).
 *
 * @see DESIGN.md § "The library's rules" (FenceGate: a rejection has a sequence number)
 */
import type { RejectionRecord } from 'lease-fence';
import { CoordinatorHttpError } from './errors.js';
import { linkSignals } from './linked-signal.js';
import { backoffDelayMillis, createRetryPolicy, type RetryOptions } from './retry-policy.js';
import { systemTimers, type Timers } from './timers.js';

/** Where the reporter reads rejections: a `FenceGate` (its bounded `rejections` list, seq ascending). */
export interface RejectionSource {
  readonly rejections: readonly RejectionRecord[];
}

/** Where the reporter sends them: a {@link FenceGateClient}. */
export interface RejectionSink {
  reportRejection(rejection: RejectionRecord, options: { readonly wallMillis?: number; readonly signal?: AbortSignal }): Promise<unknown>;
}

/** Options of {@link reportRejections}. */
export interface RejectionReporterOptions {
  /**
   * Rejections with `seq` at or below this were reported before (restore it with the gate's
   * floor); they are not sent again. Integer ≥ 0.
   * @defaultValue 0
   */
  readonly reportedThroughSeq?: number;
  /**
   * How often the gate is checked when nobody calls {@link RejectionReporter.notify}, in
   * milliseconds. Integer ≥ 1.
   * @defaultValue 1000
   */
  readonly pollIntervalMillis?: number;
  /** Backoff between failed reports (after the client's own retries). @defaultValue `{ initialDelayMillis: 200, maxDelayMillis: 5000 }` */
  readonly retry?: Omit<RetryOptions, 'maxAttempts'>;
  /** How the reporter waits. @defaultValue {@link systemTimers} */
  readonly timers?: Timers;
  /** Wall clock for `wallMillis` of notified rejections (epoch ms, display only). @defaultValue Date.now */
  readonly wallClock?: () => number;
  /** Called after the coordinator acknowledged a rejection. */
  readonly onReported?: (rejection: RejectionRecord) => void;
  /**
   * Called when a report failed. It is retried, unless the refusal is final (see
   * {@link isFinalRefusal}): then it is dropped and counted in `dropped`.
   */
  readonly onError?: (error: unknown, rejection: RejectionRecord) => void;
}

/**
 * Whether the coordinator refused a report for good, so resending the same record can never
 * succeed: 400 (an implausible or malformed report), 403 (this gate may not report for that
 * resource), or 409 `seq-conflict` (that seq was already recorded with other content — e.g. a
 * gate that restarted without its persisted `nextSeq`). Everything else (network errors,
 * timeouts, 503) is transient and retried.
 */
export const isFinalRefusal = (error: unknown): boolean =>
  error instanceof CoordinatorHttpError
  && (error.status === 400 || error.status === 403
    || (error.status === 409 && typeof error.body === 'object' && error.body !== null
      && (error.body as { reason?: unknown }).reason === 'seq-conflict'));

/** A running reporter: see {@link reportRejections}. */
export interface RejectionReporter {
  /**
   * Wakes the reporter now. Call it from the gate's `onRejection` with the record, which also
   * stamps the refusal's wall time.
   */
  notify(rejection?: RejectionRecord): void;
  /** Resolves once every rejection the gate holds now has been acknowledged. Rejects if closed first. */
  flush(): Promise<void>;
  /** Stops reporting (an in-flight report is aborted; it will be resent by the next reporter). */
  close(): Promise<void>;
  /** Every rejection with `seq` at or below this was acknowledged (persist it with the gate's floor). */
  readonly reportedThroughSeq: number;
  /** Rejections that could not be sent: evicted from the gate before being sent, or finally refused (400, 403, 409 seq-conflict). */
  readonly dropped: number;
}

/**
 * Starts forwarding `gate`'s rejections to the coordinator through `client`, in `seq` order.
 * A rejection is retried until acknowledged (at least once); once acknowledged its `seq` is
 * never sent again; the coordinator deduplicates a resend after a lost reply by (gate, resource,
 * seq). It reads `gate.rejections`, so it works with a gate made before it: wire `onRejection`
 * to {@link RejectionReporter.notify} for prompt reports, otherwise it polls.
 *
 * @example
 * ```ts
 * const gate = new FenceGate('deploy-slot-a', { ...restored, onRejection: (r) => reporter.notify(r) });
 * const reporter = reportRejections(gate, new FenceGateClient({ baseUrl, token: gateToken }));
 * ```
 */
export const reportRejections = (gate: RejectionSource, client: RejectionSink, options: RejectionReporterOptions = {}): RejectionReporter => {
  const api = 'reportRejections';
  let reportedThroughSeq = options.reportedThroughSeq ?? 0;
  if (!Number.isSafeInteger(reportedThroughSeq) || reportedThroughSeq < 0) {
    throw new RangeError(`${api}: reportedThroughSeq must be an integer ≥ 0 (a rejection seq), got ${String(reportedThroughSeq)}`);
  }
  const pollIntervalMillis = options.pollIntervalMillis ?? 1000;
  if (!Number.isSafeInteger(pollIntervalMillis) || pollIntervalMillis < 1) {
    throw new RangeError(`${api}: pollIntervalMillis must be a positive integer (milliseconds), got ${String(pollIntervalMillis)}`);
  }
  const backoff = createRetryPolicy(api, { initialDelayMillis: 200, maxDelayMillis: 5000, ...options.retry });
  const timers = options.timers ?? systemTimers;
  const wallClock = options.wallClock ?? Date.now;
  const wallMillisBySeq = new Map<number, number>();
  const stop = new AbortController();
  let wake: AbortController = new AbortController();
  let dropped = 0;
  let flushWaiters: { throughSeq: number; resolve: () => void; reject: (error: unknown) => void }[] = [];

  const pending = (): RejectionRecord[] => {
    const records = gate.rejections;
    let first = records.length;
    while (first > 0 && (records[first - 1]?.seq ?? 0) > reportedThroughSeq) first -= 1;
    return records.slice(first);
  };
  const settleFlushes = (): void => {
    const waiting = flushWaiters;
    flushWaiters = waiting.filter((waiter) => waiter.throughSeq > reportedThroughSeq);
    for (const waiter of waiting) if (waiter.throughSeq <= reportedThroughSeq) waiter.resolve();
  };
  const acknowledge = (record: RejectionRecord): void => {
    if (record.seq > reportedThroughSeq + 1) dropped += record.seq - reportedThroughSeq - 1;
    reportedThroughSeq = record.seq;
    for (const seq of wallMillisBySeq.keys()) if (seq <= reportedThroughSeq) wallMillisBySeq.delete(seq);
    settleFlushes();
  };

  const run = async (): Promise<void> => {
    let failures = 0;
    while (!stop.signal.aborted) {
      const batch = pending();
      let failed = false;
      for (const record of batch) {
        if (record.seq <= reportedThroughSeq) continue;
        const wallMillis = wallMillisBySeq.get(record.seq);
        try {
          await client.reportRejection(record, { signal: stop.signal, ...(wallMillis === undefined ? {} : { wallMillis }) });
        } catch (error) {
          if (stop.signal.aborted) return;
          safely(() => options.onError?.(error, record));
          if (isFinalRefusal(error)) {
            dropped += 1;
            acknowledge(record);
            continue;
          }
          failed = true;
          break;
        }
        failures = 0;
        acknowledge(record);
        safely(() => options.onReported?.(record));
      }
      if (failed) {
        failures += 1;
        await timers.sleep(backoffDelayMillis(backoff, failures), stop.signal).catch(() => undefined);
        continue;
      }
      if (pending().length > 0) continue;
      const current = wake;
      const woken = linkSignals(stop.signal, current.signal);
      await timers.sleep(pollIntervalMillis, woken.signal).catch(() => undefined);
      woken.dispose();
      if (current === wake && current.signal.aborted) wake = new AbortController();
    }
  };
  const running = run();

  return {
    notify(rejection) {
      if (rejection !== undefined && rejection.seq > reportedThroughSeq && !wallMillisBySeq.has(rejection.seq)) {
        wallMillisBySeq.set(rejection.seq, wallClock());
      }
      wake.abort();
    },
    flush() {
      if (stop.signal.aborted) return Promise.reject(new Error('reportRejections: the reporter is closed'));
      const throughSeq = gate.rejections.at(-1)?.seq ?? 0;
      if (throughSeq <= reportedThroughSeq) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        flushWaiters.push({ throughSeq, resolve, reject });
        wake.abort();
      });
    },
    async close() {
      if (!stop.signal.aborted) stop.abort(new Error('reportRejections: closed'));
      for (const waiter of flushWaiters) waiter.reject(new Error('reportRejections: closed before every rejection was acknowledged'));
      flushWaiters = [];
      await running;
    },
    get reportedThroughSeq() {
      return reportedThroughSeq;
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
