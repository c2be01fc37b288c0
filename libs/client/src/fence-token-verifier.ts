/**
 * The resource side's check of signed grants: before a gate compares a fence with its floor, it
 * verifies that the coordinator signed that fence for that holder, on this resource, in this
 * namespace. A token that is unsigned, altered, signed by a key the coordinator does not publish,
 * or meant for another resource or namespace is refused with {@link InvalidFenceTokenError}; it
 * never reaches the gate, so it never raises a floor and is not recorded as a stale-fence
 * refusal, but it is counted ({@link FenceTokenVerifier.stats}).
 *
 * The library (`lease-fence`) keeps working with plain `FenceToken`s; this is a layer above it.
 * JWS verification and JWKS fetching are `jose`'s (signature, `alg` allow-list, key selection by
 * `kid`, the remote key set's cache and refetch cooldown): nothing here is hand-rolled crypto.
 *
 * The coordinator's keys are fetched on a connection that answered within the last 500 ms or a new
 * one (never a pooled keep-alive one a partition may have left silent: see `recent-connection-fetch.ts`); {@link FenceTokenVerifier.loadKeys}
 * fetches them ahead of the first token, so a gate that loaded them at start checks tokens without
 * the coordinator (until a token names a key it does not hold, or the set is older than
 * `cacheMaxAgeMillis`).
 *
 * Verified tokens are cached (a lease sends the same token with every write, and its renewals
 * carry the same string): see {@link FenceTokenVerifierOptions.tokenCacheCapacity}. A cached
 * token is admitted only while the key set still hands out the very key that verified it.
 *
 * @see libs/protocol/src/signed-grant.ts for the token's format.
 */
import {
  SIGNED_GRANT_ALGORITHM,
  SIGNED_GRANT_TYPE,
  KeysReplySchema,
  SignedGrantPayloadSchema,
  SignedTokenSchema,
  type KeysReply,
  type SignedGrantPayload,
} from '@lease-fence/protocol';
import {
  compactVerify,
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  decodeProtectedHeader,
  errors as joseErrors,
  type JWTVerifyGetKey,
  type RemoteJWKSetOptions,
} from 'jose';
import { BoundedMap, LeaseFenceError, requireCount, type FenceGate, type FenceToken } from 'lease-fence';
import { commitDurably, type FloorStore } from './floor-store.js';
import { recentConnectionFetch } from './recent-connection-fetch.js';

/**
 * Why a signed token was refused:
 * - `'malformed'` — not a string, not a compact JWS, or a header that is not JSON;
 * - `'unsupported-algorithm'` — `alg` is not `EdDSA` (`none`, `HS256`, …);
 * - `'wrong-type'` — `typ` is not a lease-fence grant (another JWS signed by the same key);
 * - `'unknown-key'` — no `kid`, or a `kid` the coordinator does not publish (after a refetch);
 * - `'bad-signature'` — the signature does not verify with the published key (altered or forged);
 * - `'bad-payload'` — signed, but its payload is not `{ resource, holderId, fence, namespace }`;
 * - `'wrong-resource'` — granted on another resource;
 * - `'wrong-namespace'` — granted by a coordinator of another namespace.
 */
export type InvalidFenceTokenReason =
  | 'malformed'
  | 'unsupported-algorithm'
  | 'wrong-type'
  | 'unknown-key'
  | 'bad-signature'
  | 'bad-payload'
  | 'wrong-resource'
  | 'wrong-namespace';

/** Every {@link InvalidFenceTokenReason}, in a fixed order (for counters and docs). */
export const INVALID_FENCE_TOKEN_REASONS: readonly InvalidFenceTokenReason[] = [
  'malformed',
  'unsupported-algorithm',
  'wrong-type',
  'unknown-key',
  'bad-signature',
  'bad-payload',
  'wrong-resource',
  'wrong-namespace',
];

/**
 * Thrown by {@link FenceTokenVerifier.verify} when a signed token is not a grant of this
 * coordinator for this resource. The write must be refused; nothing was admitted, no floor moved,
 * and it is not a stale-fence refusal (no `RejectionRecord`, nothing to report as `FenceRejected`).
 * The token itself is never put in the message.
 */
export class InvalidFenceTokenError extends LeaseFenceError {
  readonly code = 'invalid-fence-token';

  /**
   * @param reason - Why it was refused.
   * @param resource - The resource whose gate refused it.
   * @param detail - What exactly was wrong, for the message.
   */
  constructor(
    readonly reason: InvalidFenceTokenReason,
    readonly resource: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid fence token for ${JSON.stringify(resource)} (${reason}): ${detail}`, options);
    this.name = 'InvalidFenceTokenError';
  }
}

/**
 * Thrown by {@link FenceTokenVerifier.verify} when the coordinator's public keys could not be
 * fetched (unreachable, timeout, a reply that is not a JWKS) to check a token. The write must be
 * refused for now (fail closed); trying again later may succeed. Not counted as an invalid token.
 */
export class SigningKeysUnavailableError extends LeaseFenceError {
  readonly code = 'signing-keys-unavailable';
  /** Marks a transient condition: trying again later may succeed. */
  readonly retryable = true;

  /** @param url - Where the keys were fetched from. @param cause - The fetch's failure. */
  constructor(
    readonly url: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot fetch the coordinator's signing keys from ${url}: ${describeCause(options?.cause)}`, options);
    this.name = 'SigningKeysUnavailableError';
  }
}

/** A failed schema check's issues, as `path: message; …` (the key sets' and payloads' refusals). */
const describeIssues = (error: {
  readonly issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[];
}): string => error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');

const describeCause = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause));

/** Where a {@link FenceTokenVerifier} gets the coordinator's public keys. */
export type SigningKeysSource =
  | {
      /**
       * The coordinator's `GET /v1/keys`, e.g. `http://127.0.0.1:3000/v1/keys`. Fetched by
       * {@link FenceTokenVerifier.loadKeys} or on the first verify, then cached; every fetch on a new
       * connection, closed after the reply.
       */
      readonly url: string | URL;
      /**
       * A token whose `kid` is not in the cached set triggers a refetch (a key rotation), at most once
       * per this many milliseconds; within it the token is refused as `'unknown-key'`.
       * @defaultValue 30 000
       */
      readonly cooldownMillis?: number;
      /** The cached set is refetched when older than this (milliseconds). @defaultValue 600 000 */
      readonly cacheMaxAgeMillis?: number;
      /** One fetch gives up after this long (milliseconds): {@link SigningKeysUnavailableError}. @defaultValue 5 000 */
      readonly timeoutMillis?: number;
    }
  | {
      /** A fixed key set (the `GET /v1/keys` reply saved by the operator), for gates that never reach the coordinator. */
      readonly jwks: KeysReply;
    };

/** Options of {@link FenceTokenVerifier}. */
export interface FenceTokenVerifierOptions {
  /** The coordinator namespace whose grants this resource accepts (its `LEASE_FENCE_NAMESPACE`, `default` unless set). */
  readonly namespace: string;
  /** Where the public keys come from: the coordinator (fetched, cached) or a static JWKS. */
  readonly keys: SigningKeysSource;
  /** Called with every refused token, after it was counted (for a log line or a metric). Its errors are ignored. */
  readonly onInvalidToken?: (error: InvalidFenceTokenError) => void;
  /**
   * How many distinct verified tokens are remembered (oldest evicted first), so a lease's next
   * write with the same token skips the signature check (about 0.1–0.3 ms of CPU per token).
   * Keyed by the exact token string; an entry is used only while the key set returns the very
   * key object that verified it (a refetch of the coordinator's keys, a rotation or a removed
   * key drops the cache), and the resource and namespace are checked on every call. Refused
   * tokens are never cached. Tokens carry no expiry, so a cached token is admitted exactly when
   * the uncached check would admit it. A non-negative integer; 0 turns the cache off.
   * @defaultValue 1 024
   */
  readonly tokenCacheCapacity?: number;
}

/** Default of {@link FenceTokenVerifierOptions.tokenCacheCapacity}: about 0.5 MB of tokens at most. */
export const DEFAULT_TOKEN_CACHE_CAPACITY = 1_024;

/** A token whose signature verified: the grant it carries and the key object that verified it. */
interface VerifiedToken {
  /** The key the key set returned for `header` when the signature verified (compared by identity). */
  readonly key: unknown;
  /** What `jose` passed the key set, to ask it again for the key. */
  readonly header: Parameters<JWTVerifyGetKey>[0];
  readonly input: Parameters<JWTVerifyGetKey>[1];
  /** The signed payload, parsed. */
  readonly grant: SignedGrantPayload;
}

/** Counters of a {@link FenceTokenVerifier}. */
export interface FenceTokenVerifierStats {
  /** Tokens verified and handed to the gate. */
  readonly verified: number;
  /** Tokens refused as invalid (every {@link InvalidFenceTokenError}). */
  readonly invalid: number;
  /** Invalid tokens by reason. */
  readonly invalidByReason: Readonly<Record<InvalidFenceTokenReason, number>>;
  /** Verifications that could not run because the keys could not be fetched ({@link SigningKeysUnavailableError}). */
  readonly keysUnavailable: number;
  /** Of `verified`, how many were answered from the verified-token cache (no signature check). */
  readonly cacheHits: number;
}

/**
 * Verifies signed grants for the gates of one resource server, then yields the `FenceToken` the
 * gate compares. Checks, in order: a compact JWS; `alg` `EdDSA` only; `typ`; a `kid` the
 * coordinator publishes; the signature; the payload's shape; the resource; the namespace.
 *
 * @example
 * ```ts
 * const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { url: `${baseUrl}/v1/keys` } });
 * await commitVerified(gate, verifier, request.headers['x-lease-token'], () => applyTheWrite());
 * ```
 */
export class FenceTokenVerifier {
  /** The namespace accepted. */
  readonly namespace: string;
  readonly #keySet: JWTVerifyGetKey;
  readonly #keysUrl: string | undefined;
  /** The coordinator's key set (`{ url }`), for {@link FenceTokenVerifier.loadKeys}; undefined for a static `jwks`. */
  readonly #remote: ReturnType<typeof createRemoteJWKSet> | undefined;
  readonly #onInvalidToken: ((error: InvalidFenceTokenError) => void) | undefined;
  readonly #verifiedTokens: BoundedMap<string, VerifiedToken>;
  #verified = 0;
  #keysUnavailable = 0;
  #cacheHits = 0;
  readonly #invalid = new Map<InvalidFenceTokenReason, number>(
    INVALID_FENCE_TOKEN_REASONS.map((reason) => [reason, 0]),
  );

  /**
   * @throws TypeError when `namespace` is empty, `keys` is neither `{ url }` nor `{ jwks }`, the
   *   url is not http(s), or `jwks` is not a JWKS of Ed25519 keys.
   * @throws RangeError when a duration is negative or not finite, or `tokenCacheCapacity` is not a
   *   non-negative safe integer (TypeError when it is not a number).
   */
  constructor(options: FenceTokenVerifierOptions) {
    const api = 'FenceTokenVerifier';
    if (typeof options?.namespace !== 'string' || options.namespace.length === 0) {
      throw new TypeError(
        `${api}: namespace must be a non-empty string (the coordinator's LEASE_FENCE_NAMESPACE), got ${JSON.stringify(options?.namespace)}`,
      );
    }
    this.namespace = options.namespace;
    this.#onInvalidToken = options.onInvalidToken;
    const tokenCacheCapacity = options.tokenCacheCapacity ?? DEFAULT_TOKEN_CACHE_CAPACITY;
    requireCount(api, 'tokenCacheCapacity', tokenCacheCapacity);
    this.#verifiedTokens = new BoundedMap(tokenCacheCapacity);
    const keys = options.keys as
      | Partial<{
          url: string | URL;
          jwks: unknown;
          cooldownMillis: number;
          cacheMaxAgeMillis: number;
          timeoutMillis: number;
        }>
      | undefined;
    if (keys?.jwks !== undefined) {
      const parsed = KeysReplySchema.safeParse(keys.jwks);
      if (!parsed.success) {
        throw new TypeError(
          `${api}: keys.jwks must be a JWKS of Ed25519 public keys as GET /v1/keys serves it: ${describeIssues(parsed.error)}`,
        );
      }
      this.#keySet = createLocalJWKSet(parsed.data);
      this.#keysUrl = undefined;
      this.#remote = undefined;
      return;
    }
    let url: URL;
    try {
      url = new URL(keys?.url ?? '');
    } catch {
      throw new TypeError(
        `${api}: keys must be { url } (the coordinator's /v1/keys) or { jwks }, got ${JSON.stringify(keys?.url)}`,
      );
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new TypeError(`${api}: keys.url must be http(s), got ${JSON.stringify(url.href)}`);
    const millis = (field: 'cooldownMillis' | 'cacheMaxAgeMillis' | 'timeoutMillis', fallback: number): number => {
      const value = keys?.[field] ?? fallback;
      if (!Number.isFinite(value) || value < 0)
        throw new RangeError(`${api}: keys.${field} must be a finite number ≥ 0 (milliseconds), got ${String(value)}`);
      return value;
    };
    const remoteOptions: RemoteJWKSetOptions = {
      cooldownDuration: millis('cooldownMillis', 30_000),
      cacheMaxAge: millis('cacheMaxAgeMillis', 600_000),
      timeoutDuration: millis('timeoutMillis', 5_000),
      [customFetch]: recentConnectionFetch,
    };
    const remote = createRemoteJWKSet(url, remoteOptions);
    this.#remote = remote;
    // Tells a failure to get the key set (network, timeout, not a JWKS) from a token naming a key
    // the set does not hold: only the first is "keys unavailable".
    this.#keySet = async (header, input) => {
      try {
        return await remote(header, input);
      } catch (error) {
        if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWKSMultipleMatchingKeys)
          throw error;
        throw new KeysFetchFailure(error);
      }
    };
    this.#keysUrl = url.href;
  }

  /**
   * Fetches the coordinator's keys now (the refetch cooldown does not apply) and keeps them for the
   * verifications that follow, so the first token is checked without a fetch. A gate calls it at
   * start, until it succeeds, as its readiness: a later partition then does not meet an empty key
   * cache. Resolves at once for a static `jwks`.
   *
   * @throws {@link SigningKeysUnavailableError} when the fetch failed (unreachable, timeout, not 200)
   *   or its reply is not a JWKS of Ed25519 public keys as `GET /v1/keys` serves it.
   */
  async loadKeys(): Promise<void> {
    const remote = this.#remote;
    if (remote === undefined) return;
    try {
      await remote.reload();
    } catch (error) {
      throw new SigningKeysUnavailableError(this.#keysUrl ?? '', { cause: error });
    }
    const parsed = KeysReplySchema.safeParse(remote.jwks());
    if (!parsed.success) {
      throw new SigningKeysUnavailableError(this.#keysUrl ?? '', {
        cause: new Error(`not a JWKS of Ed25519 public keys: ${describeIssues(parsed.error)}`),
      });
    }
  }

  /** What this verifier has verified and refused so far. */
  get stats(): FenceTokenVerifierStats {
    const invalidByReason = Object.fromEntries(this.#invalid) as Record<InvalidFenceTokenReason, number>;
    return {
      verified: this.#verified,
      invalid: [...this.#invalid.values()].reduce((sum, count) => sum + count, 0),
      invalidByReason,
      keysUnavailable: this.#keysUnavailable,
      cacheHits: this.#cacheHits,
    };
  }

  /**
   * Verifies `signedToken` for `resource` and returns the fence token it proves.
   *
   * @param signedToken - What the writer sent: `lease.signedToken` from the agent SDK.
   * @param resource - The resource of the gate that will compare the fence (`gate.resource`).
   * @returns `{ resource, holderId, fence }` as the coordinator signed them.
   * @throws {@link InvalidFenceTokenError} with its `reason` (counted; the gate is not touched).
   * @throws {@link SigningKeysUnavailableError} when the keys could not be fetched (retryable).
   */
  async verify(signedToken: unknown, resource: string): Promise<FenceToken> {
    const refuse = (reason: InvalidFenceTokenReason, detail: string, cause?: unknown): never => {
      const error = new InvalidFenceTokenError(reason, resource, detail, cause === undefined ? undefined : { cause });
      this.#invalid.set(reason, (this.#invalid.get(reason) ?? 0) + 1);
      try {
        this.#onInvalidToken?.(error);
      } catch {
        // observers never change the outcome
      }
      throw error;
    };
    const cached = typeof signedToken === 'string' ? await this.#cachedGrant(signedToken) : undefined;
    if (cached !== undefined) this.#cacheHits += 1;
    const grant = cached ?? (await this.#verifySignature(signedToken, refuse));
    if (grant.resource !== resource)
      return refuse('wrong-resource', `it was granted on ${JSON.stringify(grant.resource)}`);
    if (grant.namespace !== this.namespace)
      return refuse(
        'wrong-namespace',
        `it was granted in namespace ${JSON.stringify(grant.namespace)}, this gate accepts ${JSON.stringify(this.namespace)}`,
      );
    this.#verified += 1;
    return Object.freeze({ resource: grant.resource, holderId: grant.holderId, fence: grant.fence });
  }

  /**
   * The grant of `token` if it is cached and the key set still returns the key object that
   * verified it (asking the key set again also refetches it when its cache is too old, as an
   * uncached check would). Any other answer of the key set (another key object after a refetch,
   * no key for its `kid`, a failed fetch) empties the cache, and the caller verifies afresh.
   */
  async #cachedGrant(token: string): Promise<SignedGrantPayload | undefined> {
    const entry = this.#verifiedTokens.get(token);
    if (entry === undefined) return undefined;
    let key: unknown;
    try {
      key = await this.#keySet(entry.header, entry.input);
    } catch {
      key = undefined;
    }
    if (key === entry.key) return entry.grant;
    for (const stale of [...this.#verifiedTokens.keys()]) this.#verifiedTokens.delete(stale);
    return undefined;
  }

  /**
   * The full check of a token: a compact JWS, `alg`, `typ`, `kid`, the signature against the key
   * set, the payload's shape. A token that passes is cached with the key that verified it.
   * @throws through `refuse` ({@link InvalidFenceTokenError}); {@link SigningKeysUnavailableError}.
   */
  async #verifySignature(
    signedToken: unknown,
    refuse: (reason: InvalidFenceTokenReason, detail: string, cause?: unknown) => never,
  ): Promise<SignedGrantPayload> {
    const shape = SignedTokenSchema.safeParse(signedToken);
    if (!shape.success) {
      if (typeof signedToken !== 'string') return refuse('malformed', `must be a string, got ${typeof signedToken}`);
      const problem = shape.error.issues[0]?.message ?? 'not a compact JWS';
      // The usual mistakes: the token sent the way an Authorization header is, or the header sent
      // twice (HTTP joins a repeated header's values with a comma).
      const hint = /^bearer\s/i.test(signedToken)
        ? "; send lease.signedToken alone, without the 'Bearer ' prefix"
        : /^[\w.-]+(?:\s*,\s*[\w.-]+)+$/.test(signedToken)
          ? '; got two or more tokens joined with a comma: send the header once, with one token'
          : '';
      return refuse('malformed', `${problem}${hint}`);
    }
    const token = shape.data;
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(token);
    } catch (error) {
      return refuse('malformed', 'its header is not base64url JSON', error);
    }
    if (header.alg !== SIGNED_GRANT_ALGORITHM)
      return refuse(
        'unsupported-algorithm',
        `alg must be ${SIGNED_GRANT_ALGORITHM}, got ${JSON.stringify(header.alg)}`,
      );
    if (header.typ !== SIGNED_GRANT_TYPE)
      return refuse('wrong-type', `typ must be ${SIGNED_GRANT_TYPE}, got ${JSON.stringify(header.typ)}`);
    if (typeof header.kid !== 'string' || header.kid.length === 0)
      return refuse('unknown-key', 'it names no key (kid)');
    let verified: Awaited<ReturnType<typeof compactVerify>>;
    // What the key set answered for this token: the cache compares it with later answers.
    let asked: Omit<VerifiedToken, 'grant'> | undefined;
    const keySet: JWTVerifyGetKey = async (keyHeader, input) => {
      const key = await this.#keySet(keyHeader, input);
      asked = { key, header: keyHeader, input };
      return key;
    };
    try {
      verified = await compactVerify(token, keySet, { algorithms: [SIGNED_GRANT_ALGORITHM] });
    } catch (error) {
      if (error instanceof joseErrors.JWKSNoMatchingKey)
        return refuse('unknown-key', `the coordinator publishes no key ${JSON.stringify(header.kid)}`, error);
      if (error instanceof joseErrors.JWSSignatureVerificationFailed)
        return refuse('bad-signature', "the signature does not verify with the coordinator's key", error);
      if (error instanceof KeysFetchFailure) {
        this.#keysUnavailable += 1;
        throw new SigningKeysUnavailableError(this.#keysUrl ?? '', { cause: error.cause });
      }
      return refuse('malformed', describeCause(error), error);
    }
    let json: unknown;
    try {
      json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(verified.payload));
    } catch (error) {
      return refuse('bad-payload', 'its payload is not JSON', error);
    }
    const payload = SignedGrantPayloadSchema.safeParse(json);
    if (!payload.success) return refuse('bad-payload', describeIssues(payload.error));
    if (asked !== undefined) this.#verifiedTokens.set(token, { ...asked, grant: payload.data });
    return payload.data;
  }
}

/** The remote key set could not be had; carried through `compactVerify` to {@link FenceTokenVerifier.verify}. */
class KeysFetchFailure extends Error {
  constructor(cause: unknown) {
    super('cannot fetch the signing keys', { cause });
  }
}

/**
 * Verifies `signedToken` for `gate`'s resource, then runs `write` under the fence it proves
 * (`gate.commit`: check and raise the floor, then write). An invalid token never reaches the gate.
 *
 * @returns What `write` returns.
 * @throws {@link InvalidFenceTokenError} / {@link SigningKeysUnavailableError} from the verifier (the gate untouched, `write` not run).
 * @throws `StaleFenceError` / `DoubleGrantError` from the gate (recorded as a refusal, `write` not run); what `write` throws.
 */
export async function commitVerified<T>(
  gate: FenceGate,
  verifier: FenceTokenVerifier,
  signedToken: unknown,
  write: () => T,
): Promise<Awaited<T>> {
  const token = await verifier.verify(signedToken, gate.resource);
  return await gate.commit(token, write);
}

/**
 * {@link commitVerified} with the durable floor: verifies `signedToken` for `gate`'s resource, then
 * `commitDurably(gate, store, token, write)` (check and raise, save the floor, then write). An
 * invalid token is refused before the gate and the store are touched: nothing is saved.
 *
 * @returns What `write` returns.
 * @throws {@link InvalidFenceTokenError} / {@link SigningKeysUnavailableError} (nothing saved, `write` not run);
 *   what `commitDurably` throws.
 */
export async function commitDurablyVerified<T>(
  gate: FenceGate,
  store: FloorStore,
  verifier: FenceTokenVerifier,
  signedToken: unknown,
  write: () => Promise<T>,
): Promise<T> {
  const token = await verifier.verify(signedToken, gate.resource);
  return commitDurably(gate, store, token, write);
}
