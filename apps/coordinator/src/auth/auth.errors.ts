/**
 * Authentication and authorisation failures. The exception filter maps them to 401 and 403.
 * Typed errors; their status codes are decided in one filter (../http/api-exception.filter.ts).
 */

/** No bearer token, or one the tokens file does not list. Answered 401 with `WWW-Authenticate: Bearer`. */
export class UnauthenticatedError extends Error {
  /** Stable error code. */
  readonly code = 'unauthenticated';

  /** @param message - What was missing or wrong (never echoes the token). */
  constructor(message: string) {
    super(message);
    this.name = 'UnauthenticatedError';
  }
}

/** A valid token whose role (or gate resource patterns) does not allow the operation. Answered 403. */
export class ForbiddenError extends Error {
  /** Stable error code. */
  readonly code = 'forbidden';

  /** @param message - The role required and the role held. */
  constructor(message: string) {
    super(message);
    this.name = 'ForbiddenError';
  }
}
