/**
 * The JSON body parser of the HTTP API: body-parser's `json` (the parser behind `express.json`),
 * run as Fastify's content-type parser (`http/http-adapter.ts`), so bodies are limited and refused
 * with the same answers the API has always given: malformed JSON and a JSON value that is not an
 * object or array → 400 naming `body`, over the limit → 413, an unsupported charset → 415.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import bodyParser from 'body-parser';

/** A body parser in Connect style: sets `request.body`, or calls `next(error)` (malformed JSON, oversize, bad charset). */
export type JsonBodyParser = (request: IncomingMessage, response: ServerResponse, next: (error?: unknown) => void) => void;

const expressJson = (options: { readonly limit: number; readonly strict: boolean }): JsonBodyParser => bodyParser.json(options);

/**
 * Creates the parser: `application/json` bodies only (others leave `body` undefined), objects and
 * arrays only (`strict`), at most `maxBodyBytes` (larger → a 413 error).
 * @param maxBodyBytes - The body limit in bytes.
 */
export function createJsonBodyParser(maxBodyBytes: number): JsonBodyParser {
  return expressJson({ limit: maxBodyBytes, strict: true });
}
