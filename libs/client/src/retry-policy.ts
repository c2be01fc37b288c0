/**
 * Exponential backoff with full jitter, for the failures the SDK retries: network errors,
 * per-attempt timeouts (a lost or late reply) and 503 (coordinator recovering or superseded).
 * Business denials and other statuses are never retried.
 *
 * @see https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/ (full jitter)
 */

/** How often and how patiently a request is retried. */
export interface RetryOptions {
  /**
   * Attempts in total, the first included. Integer, 1 ≤ maxAttempts.
   * @defaultValue 5
   */
  readonly maxAttempts?: number;
  /**
   * Upper bound of the first backoff, in milliseconds. Finite, 0 ≤ initialDelayMillis.
   * @defaultValue 100
   */
  readonly initialDelayMillis?: number;
  /**
   * Cap of any single backoff, in milliseconds. Finite, initialDelayMillis ≤ maxDelayMillis.
   * @defaultValue 2000
   */
  readonly maxDelayMillis?: number;
  /**
   * Source of uniform numbers in [0, 1) for the jitter.
   * @defaultValue Math.random
   */
  readonly random?: () => number;
}

/** {@link RetryOptions} with every default filled in and validated. */
export interface RetryPolicy {
  /** Attempts in total, the first included (≥ 1). */
  readonly maxAttempts: number;
  /** Upper bound of the first backoff, in milliseconds. */
  readonly initialDelayMillis: number;
  /** Cap of any single backoff, in milliseconds. */
  readonly maxDelayMillis: number;
  /** Uniform numbers in [0, 1) for the jitter. */
  readonly random: () => number;
}

/**
 * Validates `options` and fills in the defaults.
 * @param api - Name of the calling API, for error messages.
 * @throws RangeError naming the field, the unit and the value when a field is out of range.
 */
export const createRetryPolicy = (api: string, options: RetryOptions = {}): RetryPolicy => {
  const maxAttempts = options.maxAttempts ?? 5;
  const initialDelayMillis = options.initialDelayMillis ?? 100;
  const maxDelayMillis = options.maxDelayMillis ?? Math.max(2000, initialDelayMillis);
  if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1) {
    throw new RangeError(`${api}: retry.maxAttempts must be an integer ≥ 1 (attempts), got ${String(maxAttempts)}`);
  }
  if (!Number.isFinite(initialDelayMillis) || initialDelayMillis < 0) {
    throw new RangeError(
      `${api}: retry.initialDelayMillis must be a finite number ≥ 0 (milliseconds), got ${String(initialDelayMillis)}`,
    );
  }
  if (!Number.isFinite(maxDelayMillis) || maxDelayMillis < initialDelayMillis) {
    throw new RangeError(
      `${api}: retry.maxDelayMillis must be finite and ≥ initialDelayMillis ${initialDelayMillis} (milliseconds), got ${String(maxDelayMillis)}`,
    );
  }
  return { maxAttempts, initialDelayMillis, maxDelayMillis, random: options.random ?? Math.random };
};

/**
 * The backoff before retry number `retry` (1 = the wait after the first failed attempt), in
 * milliseconds: uniform in [0, min(maxDelayMillis, initialDelayMillis · 2^(retry-1))).
 */
export const backoffDelayMillis = (policy: RetryPolicy, retry: number): number =>
  Math.floor(
    policy.random() * Math.min(policy.maxDelayMillis, policy.initialDelayMillis * 2 ** Math.max(0, retry - 1)),
  );
