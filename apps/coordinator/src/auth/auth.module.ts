/**
 * Provides the {@link TokenRegistry} (loaded by `main.ts` before the app is created, so a bad
 * tokens file stops start-up with a clear message) and the role guards.
 */
import { type DynamicModule, Module } from '@nestjs/common';
import { AgentGuard, GateGuard, ViewerGuard } from './role.guards.js';
import { TokenRegistry } from './token-registry.js';

/** Auth wiring; global so every controller module can use the guards. */
@Module({})
export class AuthModule {
  /** @param tokens - The parsed tokens file. */
  static forRoot(tokens: TokenRegistry): DynamicModule {
    return {
      module: AuthModule,
      global: true,
      providers: [{ provide: TokenRegistry, useValue: tokens }, ViewerGuard, AgentGuard, GateGuard],
      exports: [TokenRegistry, ViewerGuard, AgentGuard, GateGuard],
    };
  }
}
