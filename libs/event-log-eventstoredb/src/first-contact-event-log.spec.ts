import {
  EventLogCorruptError,
  EventLogUnavailableError,
  type EventLog,
  type RecordedEvent,
} from '@lease-fence/coordinator-core';
import { createMemoryEventLog, createMemoryEventLogStorage } from '@lease-fence/coordinator-core';
import { describe, expect, it } from 'vitest';
import { openFirstContactEventLog } from './first-contact-event-log.js';

/**
 * Logs on one storage, like clients of one server. A log whose first call finds the server down
 * stays broken for good (the client behaviour being worked around); one that reached it once
 * works whenever the server is up.
 */
function fakeServer() {
  const storage = createMemoryEventLogStorage();
  const server = { up: false, opened: 0, closed: 0 };
  const connect = async (): Promise<EventLog> => {
    server.opened += 1;
    const inner = createMemoryEventLog({ storage });
    let reached = false;
    let broken = false;
    const unavailable = () => new EventLogUnavailableError('memory', { message: 'connection refused' });
    const down = (): boolean => {
      if (broken) return true;
      if (server.up) {
        reached = true;
        return false;
      }
      broken = !reached;
      return true;
    };
    return {
      name: inner.name,
      append: (events, options) => (down() ? Promise.reject(unavailable()) : inner.append(events, options)),
      read: (range) => (down() ? failing(unavailable()) : inner.read(range)),
      version: () => (down() ? Promise.reject(unavailable()) : inner.version()),
      subscribe: (options) => inner.subscribe(options),
      latestSnapshot: () => (down() ? Promise.reject(unavailable()) : inner.latestSnapshot()),
      saveSnapshot: (snapshot) => inner.saveSnapshot(snapshot),
      close: async () => {
        server.closed += 1;
        await inner.close();
      },
    };
  };
  return { server, connect };
}

function failing(error: unknown): AsyncIterable<RecordedEvent> {
  return { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }) };
}

/** Resolves once the pending replacement (if any) has settled: replacements run on the next turns. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('openFirstContactEventLog', () => {
  it('replaces a log that failed before ever reaching the server, so the server is reached once it is up', async () => {
    // Given a server that is down at start-up
    const { server, connect } = fakeServer();
    const log = await openFirstContactEventLog(connect);
    await expect(log.version()).rejects.toBeInstanceOf(EventLogUnavailableError);
    await settle();

    // When the server comes up
    server.up = true;

    // Then the next call reaches it through a fresh log, and the broken one was closed
    expect(await log.version()).toBe(0);
    expect(server).toMatchObject({ opened: 2, closed: 1 });
    await log.close();
  });

  it('treats a failed read before first contact like any other failed call', async () => {
    const { server, connect } = fakeServer();
    const log = await openFirstContactEventLog(connect);
    await expect(log.read({ from: 1 })[Symbol.asyncIterator]().next()).rejects.toBeInstanceOf(EventLogUnavailableError);
    await settle();
    server.up = true;
    expect(await log.latestSnapshot()).toBeUndefined();
    expect(server.opened).toBe(2);
    await log.close();
  });

  it('keeps its log once the server was reached: a later loss is left to the client to reconnect', async () => {
    // Given a log that reached the server
    const { server, connect } = fakeServer();
    server.up = true;
    const log = await openFirstContactEventLog(connect);
    expect(await log.version()).toBe(0);

    // When the server goes down
    server.up = false;
    await expect(log.version()).rejects.toBeInstanceOf(EventLogUnavailableError);
    await settle();

    // Then the log was not replaced
    expect(server).toMatchObject({ opened: 1, closed: 0 });
    await log.close();
    expect(server.closed).toBe(1);
  });

  it('does not replace the log for a failure other than an unavailable server', async () => {
    const corrupt = new EventLogCorruptError({ position: 1, issues: [{ path: '', message: 'gap' }] });
    let opened = 0;
    const log = await openFirstContactEventLog(async () => {
      opened += 1;
      const inner = createMemoryEventLog();
      return {
        ...inner,
        name: inner.name,
        version: () => Promise.reject(corrupt),
        close: () => inner.close(),
      } as EventLog;
    });
    await expect(log.version()).rejects.toBe(corrupt);
    await settle();
    expect(opened).toBe(1);
    await log.close();
  });
});
