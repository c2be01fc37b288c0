import { describe, expect, it } from 'vitest';
import { LogBuilder } from '@lease-fence/dashboard-model/testing';
import { fetchEventsPage, type FetchLike } from './http-client.js';

function replying(
  status: number,
  body: unknown,
): { fetch: FetchLike; calls: { url: string; headers: Record<string, string> }[] } {
  const calls: { url: string; headers: Record<string, string> }[] = [];
  const fetch: FetchLike = (url, init) => {
    calls.push({ url, headers: init.headers });
    return Promise.resolve({ status, ok: status >= 200 && status < 300, json: () => Promise.resolve(body) });
  };
  return { fetch, calls };
}

describe('fetchEventsPage', () => {
  it('asks for events after a position with the bearer token and returns them parsed with the head', async () => {
    // Arrange
    const log = new LogBuilder();
    log.started();
    const { fetch, calls } = replying(200, { events: log.events, head: 7 });

    // Act
    const result = await fetchEventsPage({ baseUrl: 'http://127.0.0.1:3000', token: 't0k', after: 0, limit: 1, fetch });

    // Assert
    expect(calls[0]).toEqual({
      url: 'http://127.0.0.1:3000/v1/events?after=0&limit=1',
      headers: { authorization: 'Bearer t0k', accept: 'application/json' },
    });
    expect(result).toEqual({ ok: true, events: log.events, head: 7 });
  });

  it.each([
    [401, {}, 'unauthorized'],
    [403, {}, 'unauthorized'],
    [503, {}, 'http-error'],
    [200, { events: [], head: -1 }, 'invalid-body'],
    [200, { events: [{ position: 1 }], head: 1 }, 'invalid-body'],
  ])('answers %i with %j as %s, without throwing', async (status, body, reason) => {
    const result = await fetchEventsPage({
      baseUrl: 'http://h',
      token: 't',
      after: 0,
      limit: 1,
      fetch: replying(status, body).fetch,
    });
    expect(result).toMatchObject({ ok: false, reason });
  });

  it('reports a network failure as data', async () => {
    const result = await fetchEventsPage({
      baseUrl: 'http://h',
      token: 't',
      after: 0,
      limit: 1,
      fetch: () => Promise.reject(new Error('ECONNREFUSED')),
    });
    expect(result).toEqual({
      ok: false,
      reason: 'network',
      status: undefined,
      message: 'could not reach the coordinator: ECONNREFUSED',
    });
  });
});
