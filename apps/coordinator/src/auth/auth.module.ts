/**
 * Provides the {@link TokenRegistry} (loaded by `main.ts` before the app is created, so a bad
 * tokens file stops start-up with a clear message), the {@link AuthFailureLog} (shared with the
 * exception filter, which `main.ts` creates) and the role guards.
 */
import { type DynamicModule, Module } from '@nestjs/common';
import { AuthFailureLog } from './auth-failure-log.js';
import { AgentGuard, GateGuard, ViewerGuard } from './role.guards.js';
import { TokenRegistry } from './token-registry.js';

/** Auth wiring; global so every controller module can use the guards. */
@Module({})
export class AuthModule {
  /** @param tokens - The parsed tokens file. @param authFailures - The process's log of 401 / 403 replies. */
  static forRoot(tokens: TokenRegistry, authFailures: AuthFailureLog): DynamicModule {
    return {
      module: AuthModule,
      global: true,
      providers: [
        { provide: TokenRegistry, useValue: tokens },
        { provide: AuthFailureLog, useValue: authFailures },
        ViewerGuard,
        AgentGuard,
        GateGuard,
      ],
      exports: [TokenRegistry, AuthFailureLog, ViewerGuard, AgentGuard, GateGuard],
    };
  }
}
