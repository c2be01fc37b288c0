/**
 * TEST DOUBLE of the coordinator's grant signing key: a fresh Ed25519 key that signs grants in
 * the coordinator's token format (`libs/protocol/src/signed-grant.ts`) and publishes its public
 * key as `GET /v1/keys` does. For tests of gates and verifiers; never for production.
 */
import { SIGNED_GRANT_ALGORITHM, SIGNED_GRANT_TYPE, type KeysReply } from '@lease-fence/protocol';
import { calculateJwkThumbprint, CompactSign, exportJWK, generateKeyPair } from 'jose';

/** A signing key made by {@link createTestSigningKey}. */
export interface TestSigningKey {
  /** Its key id (RFC 7638 thumbprint), named in the `kid` header of what it signs. */
  readonly kid: string;
  /** Its public key, base64url (the JWK's `x`). */
  readonly x: string;
  /** Its public key as a JWKS, as the coordinator's `GET /v1/keys` serves it. */
  readonly jwks: KeysReply;
  /**
   * Signs `payload` (JSON) as a compact JWS with the coordinator's header
   * `{ alg: 'EdDSA', kid, typ }`; `header` overrides or adds fields (`undefined` drops one).
   */
  sign(payload: unknown, header?: Readonly<Record<string, unknown>>): Promise<string>;
}

/** Creates a fresh Ed25519 signing key. */
export async function createTestSigningKey(): Promise<TestSigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNED_GRANT_ALGORITHM, { crv: 'Ed25519' });
  const jwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(jwk, 'sha256');
  const x = jwk.x ?? '';
  return {
    kid,
    x,
    jwks: { keys: [{ kty: 'OKP', crv: 'Ed25519', x, kid, alg: SIGNED_GRANT_ALGORITHM, use: 'sig' }] },
    sign: (payload, header = {}) =>
      new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
        .setProtectedHeader({ alg: SIGNED_GRANT_ALGORITHM, kid, typ: SIGNED_GRANT_TYPE, ...header })
        .sign(privateKey),
  };
}
