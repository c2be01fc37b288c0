import { describe, expect, it } from 'vitest';
import { AuthFailureLog } from './auth-failure-log.js';

/** A logger double that keeps every warn line. */
function recordingLogger() {
  const lines: { fields: Record<string, unknown>; message: string }[] = [];
  return {
    lines,
    warn: (fields: Record<string, unknown>, message: string) => {
      lines.push({ fields, message });
    },
  };
}

const failure = {
  method: 'GET',
  url: '/v1/stream?after=0&token=s3cret-token',
  status: 401,
  reason: 'unknown bearer token',
} as const;

describe('AuthFailureLog', () => {
  it('logs method, path, status and reason at warn, and never the query string that may carry a token', () => {
    // Arrange
    const logger = recordingLogger();
    const log = new AuthFailureLog(logger as never, { now: () => 0 });

    // Act
    log.record({ ...failure, remoteAddress: '127.0.0.1' });

    // Assert
    expect(logger.lines).toEqual([
      {
        fields: {
          method: 'GET',
          path: '/v1/stream',
          status: 401,
          reason: 'unknown bearer token',
          remoteAddress: '127.0.0.1',
        },
        message: 'authentication failed: GET /v1/stream: unknown bearer token',
      },
    ]);
    expect(JSON.stringify(logger.lines)).not.toContain('s3cret-token');
  });

  it('calls a 403 an authorization failure', () => {
    const logger = recordingLogger();
    new AuthFailureLog(logger as never, { now: () => 0 }).record({
      method: 'POST',
      url: '/v1/leases/x/acquire',
      status: 403,
      reason: 'this operation needs the agent role',
    });
    expect(logger.lines[0]?.message).toBe(
      'authorization failed: POST /v1/leases/x/acquire: this operation needs the agent role',
    );
  });

  it('logs at most maxLinesPerWindow lines per window, then says how many it left out when the next window opens', () => {
    // Arrange
    const logger = recordingLogger();
    let nowMillis = 0;
    const log = new AuthFailureLog(logger as never, { maxLinesPerWindow: 2, windowMillis: 1000, now: () => nowMillis });

    // Act: five failures in one window, then one in the next
    for (let i = 0; i < 5; i += 1) log.record(failure);
    nowMillis = 1000;
    log.record(failure);

    // Assert
    expect(logger.lines.map((line) => line.fields.suppressed ?? line.fields.status)).toEqual([401, 401, 3, 401]);
    expect(logger.lines[2]?.message).toContain('3 more authentication failures were not logged');
  });

  it('refuses a window that is not a positive integer', () => {
    expect(() => new AuthFailureLog(recordingLogger() as never, { windowMillis: 0 })).toThrow(
      new RangeError('AuthFailureLog: windowMillis must be a positive integer, got 0'),
    );
  });
});
