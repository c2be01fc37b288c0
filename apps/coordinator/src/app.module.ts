/**
 * The composition root: wires configuration, auth, the event log, the coordinator and the
 * transports. No lease rules live in this app; they are in `lease-fence` and `coordinator-core`.
 * @see docs/design.md § Layout
 */
import { type DynamicModule, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { AgentLinkModule } from './agent-link/agent-link.module.js';
import type { AuthFailureLog } from './auth/auth-failure-log.js';
import { AuthModule } from './auth/auth.module.js';
import type { TokenRegistry } from './auth/token-registry.js';
import type { Config } from './config/config.js';
import { ConfigModule } from './config/config.module.js';
import { CoordinatorModule } from './coordinator/coordinator.module.js';
import { DocsModule } from './docs/docs.module.js';
import { EventLogModule } from './event-log/event-log.module.js';
import { HealthModule } from './health/health.module.js';
import { HttpModule } from './http/http.module.js';
import { LeasesModule } from './leases/leases.module.js';
import type { GrantSigner } from './signing/grant-signer.js';
import { SigningModule } from './signing/signing.module.js';
import { StreamModule } from './stream/stream.module.js';
import { WebSocketModule } from './websocket/websocket.module.js';

/** What `main.ts` has prepared before the application is created. */
export interface AppModuleOptions {
  readonly config: Config;
  readonly tokens: TokenRegistry;
  readonly logger: Logger;
  /** The log of 401 / 403 replies, shared by the exception filter and the stream. */
  readonly authFailures: AuthFailureLog;
  /** Signs grant replies with the loaded signing keys (`signing/signing-keys.ts`). */
  readonly signer: GrantSigner;
}

/** The root module. */
@Module({})
export class AppModule {
  /** Builds the application graph from the already-parsed configuration and tokens. */
  static forRoot(options: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(options.config, options.logger),
        AuthModule.forRoot(options.tokens, options.authFailures),
        SigningModule.forRoot(options.signer),
        HttpModule,
        WebSocketModule,
        EventLogModule,
        CoordinatorModule,
        LeasesModule,
        StreamModule,
        AgentLinkModule,
        HealthModule,
        DocsModule,
      ],
    };
  }
}
