/**
 * Runs Connect-style middleware in order as one middleware, so the HTTP pipeline
 * (`http/http.module.ts`) registers a single Nest middleware instead of one per step. On Nest's
 * Fastify adapter each registered middleware is a layer of its own (`@fastify/middie`'s engine,
 * Nest's path match and its exception proxy), paid by every request; BENCHMARKS.md (§ "the HTTP
 * path's main-thread CPU") measures what one layer instead of four saves.
 *
 * Hand-written: it is the ten lines of Connect's `next` without routing (Nest already routes the
 * one middleware), and the libraries that offer it bring their own router and error handling.
 */

/** A Connect-style middleware: `next()` to go on, `next(error)` to hand an error to the exception filter. */
export type ChainedMiddleware = (request: never, response: never, next: (error?: unknown) => void) => void;

/**
 * One middleware that runs `steps` in order, as Nest would run them registered one by one: a step
 * that calls `next()` passes the request to the following step (the last one's `next()` goes on
 * to the route); a step that calls `next(error)` ends the chain there and hands `error` on, so the
 * exception filter answers it; a step that answers itself (never calls `next`) ends the chain. A
 * step that throws synchronously throws out of the chain, where Nest's middleware proxy hands it to
 * the exception filter as it would have from that step alone.
 *
 * @param steps - The middleware, in the order they run; at least one.
 * @throws {@link RangeError} when `steps` is empty.
 */
export function chainMiddleware(steps: readonly ChainedMiddleware[]): ChainedMiddleware {
  if (steps.length === 0) throw new RangeError('steps: at least one middleware is needed');
  if (steps.length === 1) return steps[0] as ChainedMiddleware;
  return (request, response, next) => {
    let index = 0;
    const step = (error?: unknown): void => {
      if (error !== undefined || index === steps.length) {
        next(error);
        return;
      }
      const middleware = steps[index++] as ChainedMiddleware;
      middleware(request, response, step);
    };
    step();
  };
}
