/**
 * The logs of the started app: refused credentials (401, 403) are logged at warn with method,
 * path and reason, never the token, and rate-limited; every request gets a `request` line at
 * `LOG_LEVEL=debug` (and none at `info`: the hot path stays quiet). Every request has an id
 * (`x-request-id`: the caller's when plausible, else minted), echoed on the reply and on each of
 * its log lines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LogLine, type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { call } from '../support/coordinator-http.js';
import { TEST_TOKENS } from '../support/test-tokens.js';

let app: RunningCoordinator;
let counter = 0;
const fresh = (prefix: string): string => `${prefix}-${++counter}`;
const isAuthFailure = (line: LogLine): boolean =>
  typeof line.msg === 'string' && /^(authentication|authorization) failed/.test(line.msg);

beforeAll(async () => {
  app = await startCoordinator({ env: { LOG_LEVEL: 'debug' } });
});

afterAll(async () => {
  await app?.cleanup();
});

describe('logs', () => {
  it('logs a refused token at warn with method, path and reason, never the token itself', async () => {
    // Arrange
    const path = `/v1/leases/${fresh('logged')}/acquire`;

    // Act
    await call(app.url, 'POST', path, { token: 'secret-but-wrong-token', json: { requestId: 'x' } });

    // Assert
    const line = await app.waitForLog((l) => isAuthFailure(l) && l.path === path);
    expect(line).toMatchObject({ level: 40, method: 'POST', path, status: 401, reason: 'unknown bearer token' });
    expect(JSON.stringify(app.logs)).not.toContain('secret-but-wrong-token');
  });

  it('logs a 403 at warn too', async () => {
    const path = `/v1/leases/${fresh('forbidden')}/acquire`;
    await call(app.url, 'POST', path, { token: TEST_TOKENS.viewer.token, json: { requestId: 'x' } });
    expect(await app.waitForLog((l) => isAuthFailure(l) && l.path === path)).toMatchObject({
      level: 40,
      status: 403,
      reason: expect.stringContaining('agent role'),
    });
  });

  it('logs each request at debug with method, path (no query string), status and duration', async () => {
    await call(app.url, 'GET', `/v1/events?after=0&marker=${fresh('q')}`, { token: TEST_TOKENS.viewer.token });
    const line = await app.waitForLog((l) => l.msg === 'request' && l.path === '/v1/events' && l.status === 400);
    expect(line).toMatchObject({ level: 20, method: 'GET', durationMillis: expect.any(Number) });
    expect(JSON.stringify(line)).not.toContain('marker');
  });

  it("echoes the caller's x-request-id and puts it on the request's log lines, the auth failure and the request line", async () => {
    // Arrange
    const path = `/v1/leases/${fresh('traced')}/acquire`;
    const requestId = fresh('trace-7f3a');

    // Act
    const reply = await call(app.url, 'POST', path, {
      token: 'wrong-token-traced',
      json: { requestId: 'x' },
      headers: { 'x-request-id': requestId },
    });

    // Assert
    expect(reply.status).toBe(401);
    expect(reply.headers.get('x-request-id')).toBe(requestId);
    expect(await app.waitForLog((l) => isAuthFailure(l) && l.path === path)).toMatchObject({ requestId });
    expect(await app.waitForLog((l) => l.msg === 'request' && l.path === path)).toMatchObject({
      requestId,
      status: 401,
    });
  });

  it('mints a request id when the caller sends none or an implausible one, on every route', async () => {
    for (const [method, path, token] of [
      ['GET', '/healthz', undefined],
      ['POST', '/v1/leases/minted/acquire', TEST_TOKENS.agentA.token],
      ['GET', '/v2/nothing', undefined],
    ] as const) {
      const plain = await call(app.url, method, path, {
        ...(token === undefined ? {} : { token }),
        ...(method === 'POST' ? { json: { requestId: fresh('minted') } } : {}),
      });
      const implausible = await call(app.url, method, path, { headers: { 'x-request-id': 'has spaces and "quotes"' } });
      for (const reply of [plain, implausible])
        expect(reply.headers.get('x-request-id'), `${method} ${path}`).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('logs at most 10 refused tokens per 10 s, so a flood of bad tokens cannot flood the log', async () => {
    // Arrange
    const path = `/v1/leases/${fresh('flood')}/acquire`;

    // Act: 15 refused requests in a row
    for (let i = 0; i < 15; i += 1)
      await call(app.url, 'POST', path, { token: `wrong-${i}`, json: { requestId: 'x' } });
    // the request log line of each comes after its auth failure line would have
    await app.waitForLog(
      (l) =>
        l.msg === 'request' &&
        l.path === path &&
        l.status === 401 &&
        app.logs.filter((m) => m.msg === 'request' && m.path === path).length === 15,
    );

    // Assert: at most one window's worth (the tests above used 2 lines of this window)
    expect(app.logs.filter((l) => isAuthFailure(l) && l.path === path).length).toBeLessThanOrEqual(10);
  });
});
