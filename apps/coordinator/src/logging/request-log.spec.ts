import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createRequestLogMiddleware } from './request-log.js';

describe('createRequestLogMiddleware', () => {
  it('logs method, path, status, duration and request id at debug once the reply is sent, never the query string', () => {
    // Arrange
    const lines: { fields: Record<string, unknown>; message: string }[] = [];
    let nowMillis = 10;
    const middleware = createRequestLogMiddleware(
      {
        debug: (fields: Record<string, unknown>, message: string) => {
          lines.push({ fields, message });
        },
      } as never,
      () => nowMillis,
    );
    const response = Object.assign(new EventEmitter(), { statusCode: 200 });
    let nextCalled = false;

    // Act
    middleware({ method: 'GET', originalUrl: '/v1/events?after=0&token=s3cret', requestId: 'req-7' }, response, () => {
      nextCalled = true;
    });
    const beforeFinish = lines.length;
    nowMillis = 12.5;
    response.emit('finish');

    // Assert
    expect(nextCalled).toBe(true);
    expect(beforeFinish).toBe(0);
    expect(lines).toEqual([
      {
        fields: { method: 'GET', path: '/v1/events', status: 200, durationMillis: 2.5, requestId: 'req-7' },
        message: 'request',
      },
    ]);
  });
});
