/**
 * Forwards a resource's refusals to the coordinator from the gate's durable outbox: in `seq`
 * order, each retried until the coordinator acknowledges it (outages of any length), then removed
 * from the outbox durably. A single waiting refusal goes at once in its own request; when more
 * wait (a refusal storm, or an outage that ended) they go as one batch request of up to
 * `REJECTION_BATCH_MAX_ITEMS` (one group commit on the coordinator), one batch in flight. The coordinator deduplicates a resend (after a
 * lost reply, or a crash between its acknowledgement and ours) by (gate, resource, seq), so each
 * refusal is in its log exactly once. After the gate process restarts, a new reporter resumes
 * from the outbox.
 *
 * @see docs/design.md § "The library's rules" (FenceGate: a rejection has a sequence number)
 */
import { REJECTION_BATCH_MAX_ITEMS } from '@lease-fence/protocol';
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
  /**
   * Several refusals of `resource` (seq ascending) in one request, as
   * {@link FenceGateClient.reportRejectionBatch}: resolves one outcome per refusal it sent (a
   * prefix of `rejections`, at least one). Without it every refusal goes on its own.
   */
  reportRejectionBatch?(
    resource: string,
    rejections: readonly PendingRejection[],
    options: { readonly signal?: AbortSignal },
  ): Promise<readonly { readonly ok: boolean; readonly reason?: string; readonly message?: string }[]>;
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
 * When more than one refusal waits and `client` has `reportRejectionBatch`, they go as batches
 * (up to `REJECTION_BATCH_MAX_ITEMS`, all the coordinator acknowledged removed from the outbox in
 * one durable write, only after its reply), under the same rules: retried through outages and
 * 401/403/503, an item answered `seq-conflict` dropped and counted in `dropped` like a 409. A
 * batch answered 400 (one of its items cannot be true: the coordinator recorded none) is sent
 * again one refusal at a time, so the others are recorded and only that one is dropped. A
 * coordinator older than the batch route (404), or whose body limit is below a batch (413), gets
 * single reports from then on (until the reporter is started again).
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

  /** A coordinator without the batch route (404) or refusing a batch's size (413): single reports from then on. */
  let batchesRefused = client.reportRejectionBatch === undefined;
  /** A batch through this seq was answered 400: its refusals go one by one, so only the impossible one is dropped. */
  let singlyThroughSeq = 0;

  /** The refusals to send next: the first alone, or as many of the same resource as a batch holds. */
  const nextBatch = (waiting: readonly PendingRejection[], first: PendingRejection): readonly PendingRejection[] => {
    if (batchesRefused || first.seq <= singlyThroughSeq) return [first];
    const sameResource = waiting.findIndex((record) => record.resource !== first.resource);
    return waiting.slice(0, Math.min(REJECTION_BATCH_MAX_ITEMS, sameResource === -1 ? waiting.length : sameResource));
  };

  const run = async (): Promise<void> => {
    let failures = 0;
    const backOff = async (): Promise<void> => {
      failures += 1;
      await timers.sleep(backoffDelayMillis(backoff, failures), stop.signal).catch(() => undefined);
    };
    while (!stop.signal.aborted) {
      const waiting = pending();
      const next = waiting[0];
      if (next === undefined) {
        const current = wake;
        const woken = linkSignals(stop.signal, current.signal);
        await timers.sleep(pollIntervalMillis, woken.signal).catch(() => undefined);
        woken.dispose();
        if (current === wake && current.signal.aborted) wake = new AbortController();
        continue;
      }
      const batch = nextBatch(waiting, next);
      // What the coordinator answered: per refusal sent, whether it was refused for good (its error) or recorded.
      let answered: { readonly rejection: PendingRejection; readonly refusal: unknown }[];
      try {
        if (batch.length === 1) {
          try {
            await client.reportRejection(next, { signal: stop.signal, wallMillis: next.wallMillis });
            answered = [{ rejection: next, refusal: undefined }];
          } catch (error) {
            if (!isFinalRefusal(error) || stop.signal.aborted) throw error;
            answered = [{ rejection: next, refusal: error }];
          }
        } else {
          const outcomes = await client.reportRejectionBatch!(next.resource, batch, { signal: stop.signal });
          if (outcomes.length === 0 || outcomes.length > batch.length)
            throw new RangeError(
              `reportRejectionBatch answered ${outcomes.length} outcomes for ${batch.length} refusals`,
            );
          answered = outcomes.map((outcome, index) => {
            const rejection = batch[index]!;
            return {
              rejection,
              refusal: outcome.ok
                ? undefined
                : new CoordinatorHttpError(409, outcome, `report rejection ${rejection.resource}#${rejection.seq}`),
            };
          });
        }
      } catch (error) {
        if (stop.signal.aborted) return;
        if (batch.length > 1 && error instanceof CoordinatorHttpError) {
          if (error.status === 404 || error.status === 413) {
            batchesRefused = true;
            continue;
          }
          if (error.status === 400) {
            singlyThroughSeq = batch.at(-1)!.seq;
            continue;
          }
        }
        safely(() => options.onError?.(error, next));
        await backOff();
        continue;
      }
      for (const { rejection, refusal } of answered)
        if (refusal !== undefined) safely(() => options.onError?.(refusal, rejection));
      try {
        await outbox.acknowledgeRejections(answered.at(-1)!.rejection.seq);
      } catch (error) {
        // The outbox could not record it: resend later (the coordinator answers duplicate).
        safely(() => options.onError?.(error, next));
        await backOff();
        continue;
      }
      failures = 0;
      for (const { rejection, refusal } of answered) {
        if (refusal !== undefined) dropped += 1;
        else safely(() => options.onReported?.(rejection));
      }
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
