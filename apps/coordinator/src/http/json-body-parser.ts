/**
 * The JSON body parser of the HTTP API: body-parser's `json`, the parser behind `express.json`
 * (declared at the version Express 5 uses, so npm installs one copy), so the Express routes and the
 * lease fast path (`leases/lease-fast-path.ts`) parse, limit and refuse bodies with one and the
 * same parser.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import bodyParser from 'body-parser';

/** A body parser as Express middleware: sets `request.body`, or calls `next(error)` (malformed JSON, oversize, bad charset). */
export type JsonBodyParser = (request: IncomingMessage, response: ServerResponse, next: (error?: unknown) => void) => void;

const expressJson = (options: { readonly limit: number; readonly strict: boolean }): JsonBodyParser => bodyParser.json(options);

/**
 * Creates the parser: `application/json` bodies only (others leave `body` undefined), objects and
 * arrays only (`strict`), at most `maxBodyBytes` (larger → a 413 error). The same options Nest's
 * `useBodyParser('json', { limit, strict: true })` passes.
 * @param maxBodyBytes - The body limit in bytes.
 */
export function createJsonBodyParser(maxBodyBytes: number): JsonBodyParser {
  return expressJson({ limit: maxBodyBytes, strict: true });
}
