/**
 * The JSON body parser of the HTTP API: body-parser's `json` (the parser behind `express.json`),
 * run as Fastify's content-type parser (`http/http-adapter.ts`), so bodies are limited and refused
 * with the same answers the API has always given: malformed JSON and a JSON value that is not an
 * object or array → 400 naming `body`, over the limit → 413, an unsupported charset or
 * `Content-Encoding` → 415, a body that does not decompress as its `Content-Encoding` says → 400
 * naming `content-encoding` ({@link InvalidContentEncodingError}).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import bodyParser from 'body-parser';

/** A body parser in Connect style: sets `request.body`, or calls `next(error)` (malformed JSON, oversize, bad charset). */
export type JsonBodyParser = (
  request: IncomingMessage,
  response: ServerResponse,
  next: (error?: unknown) => void,
) => void;

const expressJson = (options: { readonly limit: number; readonly strict: boolean }): JsonBodyParser =>
  bodyParser.json(options);

/**
 * A body whose bytes are not what its `Content-Encoding` header says (not valid gzip, deflate or
 * br): body-parser passes on zlib's own error (`incorrect header check`), which names neither the
 * header nor the encoding.
 */
export class InvalidContentEncodingError extends Error {
  /** 400, as `status`, `statusCode` and `expose` of an http-errors error, so Nest hands it to the exception filter as an `HttpException`'s cause like body-parser's own errors. */
  readonly status = 400;
  /** See {@link InvalidContentEncodingError.status}. */
  readonly statusCode = 400;
  /** The message may reach the client. */
  readonly expose = true;

  /**
   * @param encoding - The `Content-Encoding` header as sent, lower-cased (e.g. `gzip`).
   * @param detail - zlib's message, e.g. `incorrect header check` or `unexpected end of file`.
   */
  constructor(
    readonly encoding: string,
    readonly detail: string,
  ) {
    super(`content-encoding: the body is not valid ${encoding} (${detail})`);
    this.name = 'InvalidContentEncodingError';
  }
}

/**
 * Creates the parser: `application/json` bodies only (others leave `body` undefined), objects and
 * arrays only (`strict`), at most `maxBodyBytes` (larger → a 413 error); a body that does not
 * decompress → {@link InvalidContentEncodingError}.
 * @param maxBodyBytes - The body limit in bytes.
 */
export function createJsonBodyParser(maxBodyBytes: number): JsonBodyParser {
  const parse = expressJson({ limit: maxBodyBytes, strict: true });
  return (request, response, next) =>
    parse(request, response, (error) => {
      const encoding = request.headers['content-encoding']?.toLowerCase();
      next(
        encoding !== undefined && isDecompressionError(error)
          ? new InvalidContentEncodingError(encoding, error.message)
          : error,
      );
    });
}

/**
 * True for zlib's errors (gzip / deflate: `Z_DATA_ERROR`, `Z_BUF_ERROR`, …; brotli: `ERR__ERROR_…`),
 * which carry a numeric `errno` and none of the `type`s body-parser gives its own errors.
 */
const isDecompressionError = (error: unknown): error is Error & { errno: number; code: string } => {
  if (!(error instanceof Error)) return false;
  const { errno, code, type } = error as Error & { errno?: unknown; code?: unknown; type?: unknown };
  return (
    typeof errno === 'number' &&
    typeof code === 'string' &&
    type === undefined &&
    /^(Z_|ERR__|ERR_BROTLI|ERR_ZSTD)/.test(code)
  );
};
