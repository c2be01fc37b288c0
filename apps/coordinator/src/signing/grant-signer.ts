/**
 * Signs grants at the edge where the grant reply is built (acquire and renew, including a reply
 * replayed for a retried requestId), so a gate can verify offline that the coordinator granted
 * that fence to that holder on that resource in this namespace.
 *
 * @see libs/protocol/src/signed-grant.ts for the token's format.
 */
import { KeyObject, sign } from 'node:crypto';
import {
  SIGNED_GRANT_ALGORITHM,
  SIGNED_GRANT_TYPE,
  type KeysReply,
  type SignedGrantPayload,
} from '@lease-fence/protocol';
import type { SigningKeys } from './signing-keys.js';

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
 */
export class GrantSigner {
  /** The `GET /v1/keys` reply: every published key, the active one first. */
  readonly keysReply: KeysReply;
  /** The active private key as node:crypto uses it. */
  private readonly privateKey: KeyObject;
  /** base64url of the protected header, the same for every token of the active key. */
  private readonly encodedHeader: string;
  /** resource → the latest token signed for it, and the grant it was signed for. */
  private readonly latest = new Map<
    string,
    { readonly holderId: string; readonly fence: number; readonly token: string }
  >();

  /**
   * @param keys - The loaded key set (see `signing-keys.ts`).
   * @param namespace - The coordinator namespace written into every token (`LEASE_FENCE_NAMESPACE`).
   */
  constructor(
    private readonly keys: SigningKeys,
    private readonly namespace: string,
  ) {
    this.keysReply = { keys: [...keys.published] };
    this.privateKey = KeyObject.from(keys.active.privateKey);
    this.encodedHeader = base64url(
      JSON.stringify({ alg: SIGNED_GRANT_ALGORITHM, kid: keys.active.kid, typ: SIGNED_GRANT_TYPE }),
    );
  }

  /**
   * Signs one grant.
   * @returns a compact JWS: header `{ alg: 'EdDSA', kid, typ }`, payload `{ resource, holderId, fence, namespace }`.
   */
  sign(grant: SignableGrant): Promise<string> {
    const cached = this.latest.get(grant.resource);
    if (cached !== undefined && cached.fence === grant.fence && cached.holderId === grant.holderId)
      return Promise.resolve(cached.token);
    const payload: SignedGrantPayload = {
      resource: grant.resource,
      holderId: grant.holderId,
      fence: grant.fence,
      namespace: this.namespace,
    };
    const signingInput = `${this.encodedHeader}.${base64url(JSON.stringify(payload))}`;
    const signature = sign(null, Buffer.from(signingInput), this.privateKey).toString('base64url');
    const token = `${signingInput}.${signature}`;
    this.latest.delete(grant.resource); // re-inserted last: the map's order is the age of its entries
    if (this.latest.size >= SIGNED_TOKEN_CACHE_ENTRIES) this.latest.delete(this.latest.keys().next().value!);
    this.latest.set(grant.resource, { holderId: grant.holderId, fence: grant.fence, token });
    return Promise.resolve(token);
  }
}

/** base64url without padding (RFC 7515 § 2), of a string's UTF-8 bytes. */
const base64url = (text: string): string => Buffer.from(text).toString('base64url');
