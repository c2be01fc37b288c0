import { HttpException } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { API_ROUTES } from '../docs/api-routes.js';
import { decideReply } from './api-exception.filter.js';
import { createMethodNotAllowedMiddleware } from './method-not-allowed.js';

/** Runs the middleware once; returns what it passed to `next` and the headers it set. */
function run(method: string, path: string) {
  const headers: Record<string, string> = {};
  let passed: unknown = 'not called';
  createMethodNotAllowedMiddleware(API_ROUTES)(
    { method, url: path },
    {
      setHeader: (name, value) => {
        headers[name] = value;
      },
    },
    (error) => {
      passed = error;
    },
  );
  return { passed, headers };
}

describe('createMethodNotAllowedMiddleware', () => {
  it.each([
    ['POST', '/v1/leases/deploy-slot/acquire'],
    ['GET', '/v1/leases'],
    ['HEAD', '/v1/leases'],
    ['GET', '/v1/events/'],
    ['GET', '/healthz'],
    ['POST', '/v1/nothing'],
  ])('lets %s %s through (a known method, or an unknown path for the 404)', (method, path) => {
    expect(run(method, path)).toEqual({ passed: undefined, headers: {} });
  });

  it('answers a known route called with the wrong method with 405 and an Allow header', () => {
    // Act
    const { passed, headers } = run('GET', '/v1/leases/deploy-slot/acquire');

    // Assert
    expect(headers).toEqual({ allow: 'POST' });
    expect(passed).toBeInstanceOf(HttpException);
    expect(decideReply(passed, { maxBodyBytes: 1 })).toEqual({
      status: 405,
      body: { error: 'method-not-allowed', message: 'GET is not allowed on /v1/leases/{resource}/acquire; use POST' },
    });
  });

  it('matches the path without its query string', () => {
    expect(run('POST', '/v1/events?after=0').headers).toEqual({ allow: 'GET, HEAD' });
  });

  it('lists GET and HEAD for a read route', () => {
    expect(run('DELETE', '/v1/leases').headers).toEqual({ allow: 'GET, HEAD' });
  });
});
