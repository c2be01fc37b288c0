/**
 * Signed fencing tokens: the coordinator signs every grant it hands out (acquire and renew
 * replies carry `grant.signedToken`), so a resource's gate can check offline that a fence really
 * was granted to that holder, on that resource, by this coordinator namespace, before it compares
 * the fence with its floor.
 *
 * The token is a compact JWS (RFC 7515) with `alg` `EdDSA` (Ed25519, RFC 8037), a `kid` naming the
 * signing key among those served by `GET /v1/keys` (a JWKS, RFC 7517), `typ`
 * {@link SIGNED_GRANT_TYPE}, and the JSON payload {@link SignedGrantPayloadSchema}. Ed25519
 * signatures are deterministic, so the same grant signed with the same key is the same token: a
 * retried acquire and every renewal of one fence get the same string.
 *
 * The token carries no expiry: it proves that the fence was granted, and the gate's floor decides
 * whether it is still current (a newer fence raised it). This file holds the shapes only; the
 * coordinator signs (`apps/coordinator/src/signing/`) and the SDK verifies
 * (`libs/client/src/fence-token-verifier.ts`), both with `jose`.
 */
import { z } from 'zod';
import { FenceSchema, IdSchema } from './events.js';

/** The only JWS algorithm of a signed grant: EdDSA over Ed25519. */
export const SIGNED_GRANT_ALGORITHM = 'EdDSA';

/** The JWS `typ` header of a signed grant, so no other JWS signed by the same key passes as one. */
export const SIGNED_GRANT_TYPE = 'lease-fence-grant+jws';

/**
 * The payload of a signed grant: exactly what a gate needs to admit a write, and nothing that
 * changes on renewal (so renewals of one fence carry the same token).
 */
export const SignedGrantPayloadSchema = z.object({
  /** The resource the fence was granted on; the gate checks it is its own. */
  resource: IdSchema,
  /** The holder the fence was granted to (the agent token's holder). */
  holderId: IdSchema,
  /** The fence: the generation of ownership the gate compares with its floor. */
  fence: FenceSchema,
  /** The coordinator namespace (`LEASE_FENCE_NAMESPACE`) that granted it: fences of two namespaces are unrelated. */
  namespace: IdSchema,
});
/** The parsed shape of {@link SignedGrantPayloadSchema}. */
export type SignedGrantPayload = z.infer<typeof SignedGrantPayloadSchema>;

/** A compact JWS as it travels: three base64url segments separated by dots. */
export const SignedTokenSchema = z
  .string()
  .max(4096, 'must be at most 4096 characters')
  .regex(/^[\w-]+\.[\w-]+\.[\w-]+$/, 'must be a compact JWS: three base64url segments separated by dots');

/** One public key of `GET /v1/keys`: an Ed25519 public JWK (RFC 8037) with its `kid`. */
export const PublicSigningKeySchema = z.object({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  /** The public key, base64url. */
  x: z.string().min(1),
  /** The key id named in the `kid` header of the tokens it signed. */
  kid: z.string().min(1),
  alg: z.literal(SIGNED_GRANT_ALGORITHM),
  use: z.literal('sig'),
});
/** The parsed shape of {@link PublicSigningKeySchema}. */
export type PublicSigningKey = z.infer<typeof PublicSigningKeySchema>;

/**
 * 200 reply of `GET /v1/keys` (no token needed): the public keys a gate may verify signed grants
 * with, as a JWKS. The first key is the one signing now; the others are older keys the operator
 * still publishes, so tokens they signed keep verifying after a rotation.
 */
export const KeysReplySchema = z.object({ keys: z.array(PublicSigningKeySchema) });
/** The parsed shape of {@link KeysReplySchema}. */
export type KeysReply = z.infer<typeof KeysReplySchema>;
