/**
 * Signs grants at the edge where the grant reply is built (acquire and renew, including a reply
 * replayed for a retried requestId), so a gate can verify offline that the coordinator granted
 * that fence to that holder on that resource in this namespace.
 *
 * @see libs/protocol/src/signed-grant.ts for the token's format.
 */
import { KeyObject, sign } from 'node:crypto';
import {
  type CoordinatorEvent,
  SIGNED_GRANT_ALGORITHM,
  SIGNED_GRANT_TYPE,
  type KeysReply,
  type SignedGrantPayload,
} from '@lease-fence/protocol';
import type { SigningKeys } from './signing-keys.js';
import type { SigningWorker } from './signing-worker.js';

/** What is signed of a grant: who holds which fence on which resource. */
export type SignableGrant = Pick<SignedGrantPayload, 'resource' | 'holderId' | 'fence'>;

/** Resources whose latest token is kept for renewals (entries; the oldest is dropped beyond it). */
export const SIGNED_TOKEN_CACHE_ENTRIES = 65_536;

/**
 * Makes `signedToken`s with the active key and serves the published keys. Ed25519 is
 * deterministic, so the same grant always gets the same token with the same key: a retried
 * requestId and every renewal of one fence carry the same string.
 *
 * The compact JWS is assembled here rather than by jose's `CompactSign` (which the gates verify
 * with): jose signs through WebCrypto's asynchronous `subtle.sign`, a thread-pool job per grant,
 * about 4× the CPU of node:crypto's one-shot synchronous Ed25519 `sign` on this hot path (one per
 * acquire and renew). The output is byte-for-byte jose's: the same header JSON, base64url
 * without padding (`signing-keys.spec.ts` checks it against `CompactSign`). The latest token of
 * each resource is kept, so a renewal of the same fence (or a retried acquire) signs nothing.
 *
 * With a {@link SigningWorker}, the grants of an append are signed on that thread while the
 * append is committed ({@link GrantSigner.presign}, called when the append is posted); the reply
 * built once the grant is durable takes its token from there ({@link GrantSigner.sign}). Without
 * one (or once it stopped) every token is signed on the calling thread, as before.
 */
export class GrantSigner {
  /** The `GET /v1/keys` reply: every published key, the active one first. */
  readonly keysReply: KeysReply;
  /** The active private key as node:crypto uses it. */
  private readonly privateKey: KeyObject;
  /** base64url of the protected header, the same for every token of the active key. */
  private readonly encodedHeader: string;
  /** resource → the latest token signed for it and handed out, and the grant it was signed for. */
  private readonly latest = new Map<string, CachedToken>();
  /**
   * resource → the newest grant signed ahead of its durability, or being signed, on the worker.
   * Its token is never handed out nor cached as latest until {@link GrantSigner.sign} is called
   * for that grant (after its outcome resolved); a grant whose append failed is dropped here.
   */
  private readonly presigned = new Map<string, PresignedToken>();

  /**
   * @param keys - The loaded key set (see `signing-keys.ts`).
   * @param namespace - The coordinator namespace written into every token (`LEASE_FENCE_NAMESPACE`).
   * @param worker - Signs the grants of an append while it is committed; without it every
   *   token is signed on the calling thread.
   */
  constructor(
    private readonly keys: SigningKeys,
    private readonly namespace: string,
    private readonly worker?: SigningWorker,
  ) {
    this.keysReply = { keys: [...keys.published] };
    this.privateKey = KeyObject.from(keys.active.privateKey);
    this.encodedHeader = base64url(
      JSON.stringify({ alg: SIGNED_GRANT_ALGORITHM, kid: keys.active.kid, typ: SIGNED_GRANT_TYPE }),
    );
  }

  /**
   * Starts signing `grants` on the worker, in one message, before they are durable: called when
   * their append is posted (`coordinator/coordinator-host.ts`). Grants whose latest token is
   * cached are skipped. Does nothing without a running worker. Never throws, never hands a token
   * out: see {@link GrantSigner.sign}.
   */
  presign(grants: readonly SignableGrant[]): void {
    const worker = this.worker;
    if (worker === undefined || !worker.running) return;
    const todo: { grant: SignableGrant; input: string }[] = [];
    for (const grant of grants) {
      if (this.cachedToken(grant) === undefined) todo.push({ grant, input: this.signingInput(grant) });
    }
    if (todo.length === 0) return;
    const signatures = worker.sign(todo.map((t) => t.input));
    for (let index = 0; index < todo.length; index += 1) {
      const { grant, input } = todo[index]!;
      const entry: PresignedToken = {
        holderId: grant.holderId,
        fence: grant.fence,
        input,
        token: undefined,
        // A stopped worker leaves `token` undefined: `sign` then signs on the calling thread.
        settled: signatures.then(
          (all) => void (entry.token = `${input}.${all[index]!}`),
          () => undefined,
        ),
      };
      this.presigned.delete(grant.resource); // re-inserted last: the map's order is the age of its entries
      if (this.presigned.size >= SIGNED_TOKEN_CACHE_ENTRIES) this.presigned.delete(this.presigned.keys().next().value!);
      this.presigned.set(grant.resource, entry);
    }
  }

  /**
   * Drops every token signed ahead of a grant's durability (a coordinator stopped: the appends
   * in flight are never acknowledged, their fences are burned). `coordinator/coordinator-host.ts`
   * calls it when the coordinator stops.
   */
  dropPresigned(): void {
    this.presigned.clear();
  }

  /**
   * The token of one grant, to send in a reply: call it only once the grant is durable (its
   * outcome resolved). Takes the token signed ahead on the worker when there is one (waiting for
   * it if it is still being signed; signing here if the worker stopped), else the cached latest
   * token of the same grant, else signs on the calling thread. The token becomes the resource's
   * latest unless a higher fence's is cached already.
   * @returns a compact JWS: header `{ alg: 'EdDSA', kid, typ }`, payload `{ resource, holderId, fence, namespace }`.
   */
  sign(grant: SignableGrant): Promise<string> {
    const cached = this.cachedToken(grant);
    if (cached !== undefined) return Promise.resolve(cached);
    const entry = this.presigned.get(grant.resource);
    if (entry !== undefined && entry.fence === grant.fence && entry.holderId === grant.holderId) {
      this.presigned.delete(grant.resource);
      if (entry.token !== undefined) return Promise.resolve(this.remember(grant, entry.token));
      return entry.settled.then(() => this.remember(grant, entry.token ?? this.signHere(entry.input)));
    }
    return Promise.resolve(this.remember(grant, this.signHere(this.signingInput(grant))));
  }

  /**
   * The token cached as `resource`'s latest (the one a renewal of its fence reuses) and the grant
   * it was signed for, or `undefined`: for diagnostics and tests.
   */
  latestFor(
    resource: string,
  ): { readonly holderId: string; readonly fence: number; readonly token: string } | undefined {
    return this.latest.get(resource);
  }

  /** The cached token of exactly this grant (resource, holder, fence), if any. */
  private cachedToken(grant: SignableGrant): string | undefined {
    const cached = this.latest.get(grant.resource);
    return cached !== undefined && cached.fence === grant.fence && cached.holderId === grant.holderId
      ? cached.token
      : undefined;
  }

  /** Caches `token` as the resource's latest unless a higher fence's token is cached; returns `token`. */
  private remember(grant: SignableGrant, token: string): string {
    const cached = this.latest.get(grant.resource);
    if (cached !== undefined && cached.fence > grant.fence) return token;
    this.latest.delete(grant.resource); // re-inserted last: the map's order is the age of its entries
    if (this.latest.size >= SIGNED_TOKEN_CACHE_ENTRIES) this.latest.delete(this.latest.keys().next().value!);
    this.latest.set(grant.resource, { holderId: grant.holderId, fence: grant.fence, token });
    return token;
  }

  /** The JWS signing input `<header>.<payload>` of a grant. */
  private signingInput(grant: SignableGrant): string {
    const payload: SignedGrantPayload = {
      resource: grant.resource,
      holderId: grant.holderId,
      fence: grant.fence,
      namespace: this.namespace,
    };
    return `${this.encodedHeader}.${base64url(JSON.stringify(payload))}`;
  }

  /** Signs a signing input on the calling thread; returns the compact JWS. */
  private signHere(signingInput: string): string {
    return `${signingInput}.${sign(null, Buffer.from(signingInput), this.privateKey).toString('base64url')}`;
  }
}

/**
 * The grants an append makes or extends, to sign ahead: each `LeaseGranted` and `LeaseRenewed`
 * event's resource, holder and fence, in log order.
 */
export function grantsOf(events: readonly CoordinatorEvent[]): SignableGrant[] {
  const grants: SignableGrant[] = [];
  for (const event of events) {
    if (event.type === 'LeaseGranted' || event.type === 'LeaseRenewed') {
      const { resource, holderId, fence } = event.data;
      grants.push({ resource, holderId, fence });
    }
  }
  return grants;
}

/** A token handed out and cached for its grant. */
interface CachedToken {
  readonly holderId: string;
  readonly fence: number;
  readonly token: string;
}

/** A grant signed (or being signed) on the worker before its append was acknowledged. */
interface PresignedToken {
  readonly holderId: string;
  readonly fence: number;
  /** Its JWS signing input, to sign on the calling thread if the worker stops. */
  readonly input: string;
  /** The token once the worker answered; stays undefined if the worker stopped. */
  token: string | undefined;
  /** Settles (never rejects) once the worker answered or stopped. */
  readonly settled: Promise<void>;
}

/** base64url without padding (RFC 7515 § 2), of a string's UTF-8 bytes. */
const base64url = (text: string): string => Buffer.from(text).toString('base64url');
