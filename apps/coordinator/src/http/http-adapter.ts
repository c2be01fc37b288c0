/**
 * The coordinator's one HTTP pipeline: NestJS on its Fastify adapter. Every route (lease writes,
 * gate reports, reads, probes, docs, the dashboard) goes through the same middleware
 * (`http/http.module.ts`), guards, exception filter (`http/api-exception.filter.ts`) and request log, at
 * every log level. It replaced a hand-written `node:http` fast path in front of Nest + Express for
 * the three lease routes, which skipped any guard, filter or log added later. Fastify because it is
 * Nest's own answer to Express's per-request cost; what the one pipeline costs against that fast
 * path is measured by `bench:service --modes default,baseline` (BENCHMARKS.md).
 *
 * Routing keeps Express's spelling rules the API has always had: paths match case-insensitively
 * and with or without a trailing slash.
 */
import type { IncomingMessage } from 'node:http';
import { HttpException } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { decideReply } from './api-exception.filter.js';
import { createJsonBodyParser } from './json-body-parser.js';
import { assignRequestId, REQUEST_ID_HEADER } from './request-id.js';

/**
 * Longest path parameter the router accepts (characters, percent-encoded). Far above the 200
 * characters a resource id may have (even fully percent-encoded UTF-8), so a long id reaches the
 * controller and gets its 400 naming `resource` instead of the router's 414.
 */
const MAX_PATH_PARAM_CHARS = 4096;

/** What the adapter is built from. */
export interface HttpAdapterOptions {
  /** The configured body limit (bytes): larger bodies get 413 naming `body`. */
  readonly maxBodyBytes: number;
}

/**
 * Creates the Fastify adapter: body limit, router options, request ids ({@link assignRequestId},
 * echoed as `x-request-id` on every reply, including those middleware write themselves), and the
 * JSON body parser ({@link createJsonBodyParser}: the same parser, limit and refusals as before).
 * Fastify's own logger stays off: the coordinator logs through its pino logger.
 */
export function createHttpAdapter(options: HttpAdapterOptions): FastifyAdapter {
  const adapter = new FastifyAdapter({
    logger: false,
    bodyLimit: options.maxBodyBytes,
    genReqId: (request: IncomingMessage) => assignRequestId(request),
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true, maxParamLength: MAX_PATH_PARAM_CHARS },
    // The router refuses a malformed URL (bad percent-encoding: 400 naming `path`) before any hook
    // or filter runs; the reply is decided as the exception filter would (nothing to log: no bug,
    // no credential).
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const decided = decideReply(new HttpException(error.message, error.statusCode ?? 400, { cause: error }), options);
      void reply
        .code(decided.status)
        .headers({ ...decided.headers, [REQUEST_ID_HEADER]: request.id })
        .send(decided.body);
    },
  });
  const fastify = adapter.getInstance();
  // A request Node cannot parse (a header block over 16 KiB, a malformed request line) gets Node's
  // own answer: a status line and no body, as before. Fastify's handler adds a JSON body, which a
  // client that sent HEAD reads as a broken next response.
  fastify.server.removeAllListeners('clientError');
  fastify.addHook('onRequest', (request, reply, done) => {
    // On the Node response, so a reply a middleware writes itself (the dashboard) carries it too.
    reply.raw.setHeader(REQUEST_ID_HEADER, request.id);
    done();
  });
  // One parser for every content type: body-parser's JSON parser (`application/json` only; any
  // other type leaves the body undefined, which the route's schema refuses naming `body`).
  const jsonBody = createJsonBodyParser(options.maxBodyBytes);
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (request, payload, done) => {
    const raw = payload as IncomingMessage & { body?: unknown };
    jsonBody(raw, request.raw as never, (error) =>
      error === undefined ? done(null, raw.body) : done(error as Error, undefined),
    );
  });
  return adapter;
}
