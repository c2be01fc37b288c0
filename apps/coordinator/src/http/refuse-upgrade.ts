/**
 * Refusing a WebSocket upgrade with a real HTTP reply, shared by the stream (`/v1/stream`) and
 * the gate link (`/v1/gates/link`): both check the token before upgrading.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AuthFailureLog } from '../auth/auth-failure-log.js';
import { ForbiddenError, UnauthenticatedError } from '../auth/auth.errors.js';
import { decideReply } from './api-exception.filter.js';

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  503: 'Service Unavailable',
};

/** Answers an upgrade request with a plain HTTP error (JSON body) and closes the socket. */
export function refuseUpgrade(
  socket: Duplex,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const text = JSON.stringify(body);
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(text)}`,
    'Connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${lines.join('\r\n')}\r\n\r\n${text}`);
}

/**
 * Answers an upgrade that failed with `error` as the API would (the exception filter's
 * {@link decideReply}), recording a 401 / 403 in the auth failure log first.
 */
export function refuseUpgradeWith(
  error: unknown,
  context: {
    readonly request: IncomingMessage;
    readonly path: string;
    readonly socket: Duplex;
    readonly authFailures: AuthFailureLog;
    readonly maxBodyBytes: number;
  },
): void {
  const { request, path, socket } = context;
  if (error instanceof UnauthenticatedError || error instanceof ForbiddenError) {
    context.authFailures.record({
      method: request.method ?? 'GET',
      url: path,
      status: error instanceof UnauthenticatedError ? 401 : 403,
      reason: error.message,
      remoteAddress: request.socket.remoteAddress,
    });
  }
  const decided = decideReply(error, { maxBodyBytes: context.maxBodyBytes });
  refuseUpgrade(socket, decided.status, decided.body, decided.headers);
}
