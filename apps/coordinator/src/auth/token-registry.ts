/**
 * Bearer token → {@link Principal} lookup, built once from the tokens file.
 */
import { UnauthenticatedError } from './auth.errors.js';
import type { Principal } from './principal.js';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** The tokens the coordinator accepts. Immutable after start-up. */
export class TokenRegistry {
  /** @param principals - Token value → principal. */
  constructor(private readonly principals: ReadonlyMap<string, Principal>) {}

  /** Number of tokens listed. */
  get size(): number {
    return this.principals.size;
  }

  /**
   * Resolves a token value.
   * @throws {@link UnauthenticatedError} when it is missing or not listed.
   */
  byToken(token: string | undefined): Principal {
    if (token === undefined || token === '')
      throw new UnauthenticatedError('missing bearer token: send Authorization: Bearer <token>');
    const principal = this.principals.get(token);
    if (principal === undefined) throw new UnauthenticatedError('unknown bearer token');
    return principal;
  }

  /**
   * Resolves an `Authorization` header value (`Bearer <token>`).
   * @throws {@link UnauthenticatedError} when it is missing, not a bearer credential, or not listed.
   */
  byAuthorization(header: string | undefined): Principal {
    if (header === undefined || header === '') return this.byToken(undefined);
    const match = BEARER.exec(header);
    if (match === null) throw new UnauthenticatedError('Authorization must be "Bearer <token>"');
    return this.byToken(match[1]);
  }
}
