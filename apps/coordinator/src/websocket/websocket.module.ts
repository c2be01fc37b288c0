/** What both WebSocket gateways share: the upgrade checks and the 426 for a plain GET on their paths. */
import { Global, Module } from '@nestjs/common';
import { UpgradeRequiredController } from './upgrade-required.controller.js';
import { WebSocketUpgrades } from './websocket-upgrades.js';

/** Global, so the stream and gate-link gateways (in their own modules) register with the one {@link WebSocketUpgrades}. */
@Global()
@Module({ providers: [WebSocketUpgrades], exports: [WebSocketUpgrades], controllers: [UpgradeRequiredController] })
export class WebSocketModule {}
