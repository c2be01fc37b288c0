import { describe, expect, it } from 'vitest';
import { retryFailureLog, type RetryLogger } from './retry-log.js';

/** A logger that keeps each call: its level and the fields logged. */
const recordingLogger = () => {
  const lines: { level: 'error' | 'warn' | 'debug'; fields: Record<string, unknown>; message: string }[] = [];
  const logger: RetryLogger = {
    error: (fields, message) => void lines.push({ level: 'error', fields, message }),
    warn: (fields, message) => void lines.push({ level: 'warn', fields, message }),
    debug: (fields, message) => void lines.push({ level: 'debug', fields, message }),
  };
  return { logger, lines };
};

describe("retryFailureLog: a retried operation's failures, readable while the coordinator is down", () => {
  it('logs the first failure and each change of reason at warn in words, a repeat of the same reason at debug with the error', () => {
    // Arrange
    const { logger, lines } = recordingLogger();
    const onFailure = retryFailureLog(logger, "cannot fetch the coordinator's keys yet");
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:3000');

    // Act: refused three times, then a timeout, then refused again
    for (const error of [refused, refused, refused, new Error('timed out after 5000 ms'), refused]) onFailure(error);

    // Assert
    expect(lines.map(({ level, fields }) => [level, fields['reason'] ?? null, fields['repeats'] ?? null])).toEqual([
      ['warn', 'connect ECONNREFUSED 127.0.0.1:3000', null],
      ['debug', null, 1],
      ['debug', null, 2],
      ['warn', 'timed out after 5000 ms', null],
      ['warn', 'connect ECONNREFUSED 127.0.0.1:3000', null],
    ]);
    expect(lines.every(({ message }) => message === "cannot fetch the coordinator's keys yet")).toBe(true);
    expect(lines[1]!.fields['err']).toBe(refused); // the stack is still there, at debug
    expect(lines[0]!.fields['err']).toBeUndefined();
  });

  it("words the reason with the causes' messages, each once", () => {
    const { logger, lines } = recordingLogger();
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:3000');
    const fetchFailed = new TypeError('fetch failed', { cause: refused });
    retryFailureLog(logger, 'x')(new Error('cannot fetch the keys: fetch failed', { cause: fetchFailed }));
    expect(lines[0]!.fields['reason']).toBe('cannot fetch the keys: fetch failed: connect ECONNREFUSED 127.0.0.1:3000');
  });

  it('logs at error in words when asked (a failure only an operator can end), repeats still at debug', () => {
    const { logger, lines } = recordingLogger();
    const onFailure = retryFailureLog(logger, 'x', 'error');
    onFailure(new Error('forbidden'));
    onFailure(new Error('forbidden'));
    expect(lines.map(({ level }) => level)).toEqual(['error', 'debug']);
  });

  it('words a thrown non-Error by its string', () => {
    const { logger, lines } = recordingLogger();
    retryFailureLog(logger, 'x')('plain text');
    expect(lines[0]!.fields['reason']).toBe('plain text');
  });
});
