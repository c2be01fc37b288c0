import { BadRequestException, HttpException, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import {
  CoordinatorNotServingError,
  CoordinatorUnavailableError,
  EventLogClosedError,
  EventLogCorruptError,
  EventLogUnavailableError,
} from '@lease-fence/coordinator-core';
import { ReleaseBodySchema, RenewBodySchema } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ForbiddenError, UnauthenticatedError } from '../auth/auth.errors.js';
import { decideReply } from './api-exception.filter.js';
import { DeniedOutcome } from './denied-outcome.js';
import { InvalidRequestError, MAX_UNKNOWN_KEYS_NAMED, parseInput } from './invalid-request.error.js';
import { InvalidContentEncodingError } from './json-body-parser.js';

const options = { maxBodyBytes: 16_384 };

describe('decideReply', () => {
  describe('denied outcomes', () => {
    it.each([
      [{ ok: false, reason: 'held', heldBy: 'agent-b', retryAfterMillis: 900 }, 409],
      [{ ok: false, reason: 'already-held', heldBy: 'agent-a', fence: 3, retryAfterMillis: 900 }, 409],
      [{ ok: false, reason: 'not-holder' }, 409],
      [{ ok: false, reason: 'expired' }, 410],
      [{ ok: false, reason: 'expired', fence: 7 }, 410],
    ] as const)('answers %j with %i and the outcome itself as the body', (denial, status) => {
      // Act
      const reply = decideReply(new DeniedOutcome(denial), options);

      // Assert
      expect(reply).toEqual({ status, body: denial });
    });
  });

  describe('bad input', () => {
    it('answers 400 naming each field, unknown fields one by one', () => {
      // Arrange
      const schema = z.strictObject({ requestId: z.string(), ttlMillis: z.number().int() });
      let thrown: unknown;
      try {
        parseInput(schema, { requestId: 7, ttlMillis: 1.5, holderId: 'x' }, 'body');
      } catch (error) {
        thrown = error;
      }

      // Act
      const reply = decideReply(thrown, options);

      // Assert
      expect(thrown).toBeInstanceOf(InvalidRequestError);
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ error: 'invalid-request' });
      const paths = (reply.body as { issues: { path: string }[] }).issues.map((i) => i.path).sort();
      expect(paths).toEqual(['holderId', 'requestId', 'ttlMillis']);
    });

    it('names the body when it is not a JSON object', () => {
      const reply = decideReply(
        catching(() => parseInput(z.strictObject({ fence: z.number() }), undefined, 'body')),
        options,
      );
      expect(reply.body).toMatchObject({ issues: [{ path: 'body', message: expect.stringContaining('JSON object') }] });
    });

    it("says a field of the wrong type as the other checks do, not in zod's words", () => {
      const reply = decideReply(
        catching(() => parseInput(RenewBodySchema, { requestId: 'r-1', fence: 2, ttlMillis: '5000' }, 'body')),
        options,
      );
      expect(reply.body).toMatchObject({ issues: [{ path: 'ttlMillis', message: 'must be a number, got a string' }] });
    });

    it('names at most MAX_UNKNOWN_KEYS_NAMED unknown fields one by one and counts the rest, so a reply stays small', () => {
      const body = Object.fromEntries([['fence', 1], ...Array.from({ length: 6_000 }, (_, i) => [`x${i}`, 0])]);
      const reply = decideReply(
        catching(() => parseInput(ReleaseBodySchema, body, 'body')),
        options,
      );
      const issues = (reply.body as { issues: { path: string; message: string }[] }).issues;
      expect(issues).toHaveLength(MAX_UNKNOWN_KEYS_NAMED + 1);
      expect(issues[0]).toEqual({ path: 'x0', message: 'is not a known field' });
      expect(issues.at(-1)).toEqual({
        path: 'body',
        message: `and ${6_000 - MAX_UNKNOWN_KEYS_NAMED} more unknown fields`,
      });
      expect(JSON.stringify(reply.body).length).toBeLessThan(4_000);
    });

    it('says a missing field is required, naming it and what it must be, and keeps the check of a field given wrong', () => {
      const reply = decideReply(
        catching(() => parseInput(RenewBodySchema, { fence: 1.5, ttlMillis: 1000 }, 'body')),
        options,
      );
      expect(reply.body).toMatchObject({
        message: 'requestId: is required: a string; fence: must be an integer',
        issues: [
          { path: 'requestId', message: 'is required: a string' },
          { path: 'fence', message: 'must be an integer' },
        ],
      });
    });

    it('answers malformed JSON from the body parser with 400 naming the body', () => {
      // Arrange: what Nest makes of body-parser's SyntaxError
      const parseError = Object.assign(new SyntaxError('Unexpected token } in JSON at position 9'), { status: 400 });
      const exception = new BadRequestException(parseError.message, { cause: parseError });

      // Act
      const reply = decideReply(exception, options);

      // Assert
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({
        error: 'invalid-request',
        issues: [{ path: 'body', message: expect.stringContaining('malformed JSON') }],
      });
    });

    it.each([
      ['null', 'null'],
      ['42', 'a number'],
      ['"r1"', 'a string'],
      ['true', 'a boolean'],
    ])(
      'answers valid JSON that is not an object (%s) with 400 "must be a JSON object", not "malformed JSON"',
      (raw, kind) => {
        // Arrange: body-parser's strict mode refuses it as a SyntaxError carrying the raw text as `body`
        const parseError = Object.assign(new SyntaxError(`Unexpected token '${raw[0]}', "${raw}" is not valid JSON`), {
          status: 400,
          body: raw,
        });
        const exception = new BadRequestException(parseError.message, { cause: parseError });

        // Act
        const reply = decideReply(exception, options);

        // Assert
        expect(reply).toEqual({
          status: 400,
          body: {
            error: 'invalid-request',
            message: `body: must be a JSON object, got ${kind}`,
            issues: [{ path: 'body', message: `must be a JSON object, got ${kind}` }],
          },
        });
      },
    );

    it('answers an oversize body with 413 naming the body and the limit', () => {
      const reply = decideReply(new PayloadTooLargeException('request entity too large'), options);
      expect(reply).toMatchObject({
        status: 413,
        body: { error: 'payload-too-large', message: 'body: must be at most 16384 bytes' },
      });
    });

    it('answers a body that does not decompress with 400 naming content-encoding and the encoding', () => {
      // Arrange: what the JSON body parser makes of zlib's error for `content-encoding: gzip`
      const exception = new HttpException(
        'content-encoding: the body is not valid gzip (incorrect header check)',
        400,
        { cause: new InvalidContentEncodingError('gzip', 'incorrect header check') },
      );

      // Act
      const reply = decideReply(exception, options);

      // Assert
      expect(reply).toEqual({
        status: 400,
        body: {
          error: 'invalid-request',
          message: 'content-encoding: the body is not valid gzip (incorrect header check)',
          issues: [{ path: 'content-encoding', message: 'the body is not valid gzip (incorrect header check)' }],
        },
      });
    });

    it('answers an unsupported content-encoding with 415 naming content-encoding, not content-type', () => {
      // Arrange: body-parser's error for `content-encoding: x`
      const unsupported = Object.assign(new Error('unsupported content encoding "x"'), {
        status: 415,
        encoding: 'x',
        type: 'encoding.unsupported',
      });

      // Act
      const reply = decideReply(new HttpException(unsupported.message, 415, { cause: unsupported }), options);

      // Assert
      expect(reply.status).toBe(415);
      expect(reply.body).toMatchObject({
        error: 'unsupported-media-type',
        message: expect.stringMatching(/^content-encoding: x is not supported/),
        issues: [{ path: 'content-encoding' }],
      });
    });

    it('gives any other framework 400 issues naming the body, so every 400 has the documented shape', () => {
      const reply = decideReply(new BadRequestException('something the framework refused'), options);
      expect(reply).toEqual({
        status: 400,
        body: {
          error: 'invalid-request',
          message: 'body: something the framework refused',
          issues: [{ path: 'body', message: 'something the framework refused' }],
        },
      });
    });

    it('answers an unknown route with 404', () => {
      expect(decideReply(new NotFoundException('Cannot GET /v2'), options)).toMatchObject({
        status: 404,
        body: { error: 'not-found' },
      });
    });
  });

  describe('auth', () => {
    it('answers a missing or unknown token with 401 and a Bearer challenge', () => {
      const reply = decideReply(new UnauthenticatedError('unknown bearer token'), options);
      expect(reply).toEqual({
        status: 401,
        body: { error: 'unauthenticated', message: 'unknown bearer token' },
        headers: { 'www-authenticate': 'Bearer' },
      });
    });

    it('answers a wrong role with 403', () => {
      expect(decideReply(new ForbiddenError('needs agent'), options)).toMatchObject({
        status: 403,
        body: { error: 'forbidden' },
      });
    });
  });

  describe('unavailable', () => {
    it.each(['superseded', 'unhealthy', 'closed'] as const)(
      'answers a %s coordinator with 503, retryable, and the reason',
      (reason) => {
        const reply = decideReply(new CoordinatorUnavailableError(reason), options);
        expect(reply).toMatchObject({
          status: 503,
          body: { error: 'coordinator-unavailable', retryable: true, reason },
          headers: { 'retry-after': '1' },
        });
      },
    );

    it.each(['recovering', 'standby'] as const)(
      'answers a %s process (no coordinator serving yet) with 503, retryable, and the reason',
      (reason) => {
        const reply = decideReply(new CoordinatorNotServingError(reason), options);
        expect(reply).toMatchObject({
          status: 503,
          body: { error: 'coordinator-unavailable', retryable: true, reason },
          headers: { 'retry-after': '1' },
        });
      },
    );

    it('answers an unavailable event log with 503, retryable', () => {
      const reply = decideReply(new EventLogUnavailableError('sqlite', { message: 'disk I/O error' }), options);
      expect(reply).toMatchObject({
        status: 503,
        body: { error: 'event-log-unavailable', retryable: true, reason: 'event-log-unavailable' },
      });
    });

    it('answers a damaged record read after start-up with 500 naming its position and field, not "internal error"', () => {
      const corrupt = new EventLogCorruptError({
        position: 2,
        issues: [{ path: 'data.fence', message: 'expected number' }],
      });
      const reply = decideReply(corrupt, options);
      expect(reply).toMatchObject({
        status: 500,
        body: {
          error: 'event-log-corrupt',
          message: 'event at position 2 is corrupt: data.fence: expected number',
          retryable: false,
        },
        isBug: true,
      });
    });

    it('answers a closed event log (shutting down) with 503, retryable', () => {
      const reply = decideReply(new EventLogClosedError('sqlite', 'read'), options);
      expect(reply).toMatchObject({ status: 503, body: { retryable: true, reason: 'closed' } });
    });
  });

  describe('bugs', () => {
    it.each([
      ['an Error', new Error('boom')],
      ['a RangeError from a library', new RangeError('ttlMillis must be positive')],
      ['a thrown string', 'boom'],
      ['a 5xx HttpException', new HttpException('upstream', 502)],
    ])('answers %s with 500 and marks it as a bug, without leaking its message', (_name, exception) => {
      const reply = decideReply(exception, options);
      expect(reply).toEqual({
        status: 500,
        body: { error: 'internal', message: 'internal error; it was logged' },
        isBug: true,
      });
    });
  });
});

function catching(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
