/**
 * Provides the {@link GrantSigner} (its keys are loaded by `main.ts` before the app is created, so
 * an unusable key file stops start-up with a clear message) and serves `GET /v1/keys`.
 */
import { type DynamicModule, Module } from '@nestjs/common';
import { GrantSigner } from './grant-signer.js';
import { KeysController } from './keys.controller.js';

/** Grant signing; global so the lease routes can sign their replies. */
@Module({})
export class SigningModule {
  /** @param signer - Signs with the loaded key set. */
  static forRoot(signer: GrantSigner): DynamicModule {
    return {
      module: SigningModule,
      global: true,
      controllers: [KeysController],
      providers: [{ provide: GrantSigner, useValue: signer }],
      exports: [GrantSigner],
    };
  }
}
