import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { WebSocket } from 'ws';
import { LinkLifecycle } from './link-lifecycle.js';

/** A link whose peer completes the close handshake (`answers`) or never does. */
function fakeLink(answers: boolean): WebSocket & { closedWith?: [number, string]; terminated: boolean } {
  const link = Object.assign(new EventEmitter(), {
    terminated: false,
    closedWith: undefined as [number, string] | undefined,
    close(code: number, reason: string) {
      link.closedWith = [code, reason];
      if (answers) queueMicrotask(() => link.emit('close', code, Buffer.from(reason)));
    },
    terminate() {
      link.terminated = true;
      link.emit('close', 1006, Buffer.alloc(0));
    },
  });
  return link as unknown as WebSocket & { closedWith?: [number, string]; terminated: boolean };
}

describe('LinkLifecycle.shutdown', () => {
  afterEach(() => vi.useRealTimers());

  it('closes every link going away, and terminates only a peer that has not answered within the grace', async () => {
    vi.useFakeTimers();
    const lifecycle = new LinkLifecycle({ pingIntervalMillis: 1_000, closeGraceMillis: 5_000 });
    lifecycle.start();
    const polite = fakeLink(true);
    const silent = fakeLink(false);
    let done = false;
    const shutdown = lifecycle.shutdown([polite, silent]).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(4_999);
    expect(polite.closedWith).toEqual([1001, 'shutting down']);
    expect(silent.closedWith).toEqual([1001, 'shutting down']);
    expect(polite.terminated).toBe(false);
    expect(silent.terminated).toBe(false);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await shutdown;
    expect(silent.terminated).toBe(true);
    expect(polite.terminated).toBe(false);
  });

  it('refuses a ping interval that is not a whole number of milliseconds, naming it', () => {
    expect(() => new LinkLifecycle({ pingIntervalMillis: 0.5, closeGraceMillis: 5_000 })).toThrow(/pingIntervalMillis/);
  });
});
