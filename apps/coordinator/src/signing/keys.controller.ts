/**
 * `GET /v1/keys`: the public keys gates verify signed grants with, as a JWKS. No token needed
 * (public keys are public; a gate must be able to fetch them before it has anything else).
 */
import { Controller, Get, Header } from '@nestjs/common';
import type { KeysReply } from '@lease-fence/protocol';
import { GrantSigner } from './grant-signer.js';

/** Serves the published signing keys. */
@Controller('v1/keys')
export class KeysController {
  constructor(private readonly signer: GrantSigner) {}

  /** Every published key (public part), the one signing now first. */
  @Get()
  @Header('cache-control', 'public, max-age=60')
  keys(): KeysReply {
    return this.signer.keysReply;
  }
}
