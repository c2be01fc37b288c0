/**
 * Signs grants at the edge where the grant reply is built (acquire and renew, including a reply
 * replayed for a retried requestId), so a gate can verify offline that the coordinator granted
 * that fence to that holder on that resource in this namespace.
 *
 * @see libs/protocol/src/signed-grant.ts for the token's format.
 */
import {
  SIGNED_GRANT_ALGORITHM,
  SIGNED_GRANT_TYPE,
  type KeysReply,
  type SignedGrantPayload,
} from '@lease-fence/protocol';
import { CompactSign } from 'jose';
import type { SigningKeys } from './signing-keys.js';

/** What is signed of a grant: who holds which fence on which resource. */
export type SignableGrant = Pick<SignedGrantPayload, 'resource' | 'holderId' | 'fence'>;

const encoder = new TextEncoder();

/**
 * Makes `signedToken`s with the active key and serves the published keys. Ed25519 is
 * deterministic, so the same grant always gets the same token with the same key: a retried
 * requestId and every renewal of one fence carry the same string.
 */
export class GrantSigner {
  /** The `GET /v1/keys` reply: every published key, the active one first. */
  readonly keysReply: KeysReply;

  /**
   * @param keys - The loaded key set (see `signing-keys.ts`).
   * @param namespace - The coordinator namespace written into every token (`LEASE_FENCE_NAMESPACE`).
   */
  constructor(
    private readonly keys: SigningKeys,
    private readonly namespace: string,
  ) {
    this.keysReply = { keys: [...keys.published] };
  }

  /**
   * Signs one grant.
   * @returns a compact JWS: header `{ alg: 'EdDSA', kid, typ }`, payload `{ resource, holderId, fence, namespace }`.
   */
  sign(grant: SignableGrant): Promise<string> {
    const payload: SignedGrantPayload = {
      resource: grant.resource,
      holderId: grant.holderId,
      fence: grant.fence,
      namespace: this.namespace,
    };
    return new CompactSign(encoder.encode(JSON.stringify(payload)))
      .setProtectedHeader({ alg: SIGNED_GRANT_ALGORITHM, kid: this.keys.active.kid, typ: SIGNED_GRANT_TYPE })
      .sign(this.keys.active.privateKey);
  }
}
