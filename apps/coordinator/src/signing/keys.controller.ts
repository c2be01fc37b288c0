/**
 * `GET /v1/keys`: the public keys gates verify signed grants with, as a JWKS. No token needed
 * (public keys are public; a gate must be able to fetch them before it has anything else).
 */
import { Controller, Get, Header } from '@nestjs/common';
import { type KeysReply, KeysReplySchema } from '@lease-fence/protocol';
import { ApiDoc } from '../docs/api-doc.js';
import { GrantSigner } from './grant-signer.js';

/** Serves the published signing keys. */
@Controller('v1/keys')
export class KeysController {
  constructor(private readonly signer: GrantSigner) {}

  /** Every published key (public part), the one signing now first. */
  @Get()
  @Header('cache-control', 'public, max-age=60')
  @ApiDoc({
    operationId: 'signingKeys',
    summary:
      'The public keys signed grants (`grant.signedToken`, a compact JWS with alg EdDSA) verify with, as a JWKS: the key signing now first, then older keys still published. No token needed.',
    replies: { 200: { description: 'JWKS of Ed25519 public keys.', schemas: [KeysReplySchema] } },
  })
  keys(): KeysReply {
    return this.signer.keysReply;
  }
}
