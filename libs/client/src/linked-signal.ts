/**
 * An abort signal that follows several others, and lets go of them when the operation is over.
 *
 * `AbortSignal.any` keeps every combined signal registered on its sources for as long as the
 * sources live. Combining a long-lived signal (a reporter's stop signal, an agent's shutdown
 * signal) with a fresh one per request leaks in Node (nodejs/node#55351), so the SDK combines
 * with this instead and disposes of it when the request settles.
 *
 * @see https://github.com/nodejs/node/issues/55351
 */

/** A signal aborted when any source aborts (with that source's reason), until disposed. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Removes the listeners from the sources. Idempotent. */
  dispose(): void;
}

/**
 * Links `sources` (undefined entries are skipped). Already aborted → the result is aborted with
 * the first aborted source's reason.
 * @internal
 */
export const linkSignals = (...sources: readonly (AbortSignal | undefined)[]): LinkedSignal => {
  const controller = new AbortController();
  const hooked: { source: AbortSignal; listener: () => void }[] = [];
  const dispose = (): void => {
    for (const { source, listener } of hooked.splice(0)) source.removeEventListener('abort', listener);
  };
  for (const source of sources) {
    if (source === undefined) continue;
    if (source.aborted) {
      dispose();
      controller.abort(source.reason);
      break;
    }
    const listener = (): void => {
      dispose();
      controller.abort(source.reason);
    };
    source.addEventListener('abort', listener, { once: true });
    hooked.push({ source, listener });
  }
  return { signal: controller.signal, dispose };
};
