import { describe, expect, it } from 'vitest';
import { type ChainedMiddleware, chainMiddleware } from './middleware-chain.js';

/** A step that records its name and then does what `then` says. */
const step =
  (name: string, seen: string[], then: 'next' | 'error' | 'answer' | 'throw' | 'later'): ChainedMiddleware =>
  (_request, _response, next) => {
    seen.push(name);
    if (then === 'next') next();
    else if (then === 'error') next(new Error(`refused by ${name}`));
    else if (then === 'throw') throw new Error(`thrown by ${name}`);
    else if (then === 'later') setImmediate(() => next());
  };

/** Runs `chain` once; what reached the chain's own `next` (`'not called'` when nothing did). */
function run(chain: ChainedMiddleware): { passed: unknown } {
  const outcome: { passed: unknown } = { passed: 'not called' };
  chain({} as never, {} as never, (error) => {
    outcome.passed = error;
  });
  return outcome;
}

describe('chainMiddleware', () => {
  it('runs every step in order, then goes on to the route once', () => {
    const seen: string[] = [];
    let calls = 0;
    chainMiddleware([step('log', seen, 'next'), step('auth', seen, 'next'), step('405', seen, 'next')])(
      {} as never,
      {} as never,
      (error) => {
        calls += 1;
        expect(error).toBeUndefined();
      },
    );
    expect(seen).toEqual(['log', 'auth', '405']);
    expect(calls).toBe(1);
  });

  it('stops at a step that refuses and hands its error on: the later steps never see the request', () => {
    const seen: string[] = [];
    const { passed } = run(
      chainMiddleware([step('log', seen, 'next'), step('auth', seen, 'error'), step('405', seen, 'next')]),
    );
    expect(seen).toEqual(['log', 'auth']);
    expect((passed as Error).message).toBe('refused by auth');
  });

  it('stops at a step that answers itself, without going on to the route', () => {
    const seen: string[] = [];
    const { passed } = run(chainMiddleware([step('dashboard', seen, 'answer'), step('after', seen, 'next')]));
    expect(seen).toEqual(['dashboard']);
    expect(passed).toBe('not called');
  });

  it('lets a synchronous throw out of the chain (Nest hands it to the exception filter), running no later step', () => {
    const seen: string[] = [];
    const chain = chainMiddleware([step('auth', seen, 'throw'), step('405', seen, 'next')]);
    expect(() => run(chain)).toThrow('thrown by auth');
    expect(seen).toEqual(['auth']);
  });

  it('goes on after a step that calls next later (the dashboard reads a file first)', async () => {
    const seen: string[] = [];
    const passed = await new Promise<unknown>((resolve) => {
      chainMiddleware([step('dashboard', seen, 'later'), step('after', seen, 'next')])(
        {} as never,
        {} as never,
        resolve,
      );
    });
    expect(seen).toEqual(['dashboard', 'after']);
    expect(passed).toBeUndefined();
  });

  it('is the step itself when there is one, and refuses an empty list naming steps', () => {
    const only = step('only', [], 'next');
    expect(chainMiddleware([only])).toBe(only);
    expect(() => chainMiddleware([])).toThrow(/^steps: /);
  });
});
