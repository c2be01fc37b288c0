/** The `/v1/stream` WebSocket. */
import { Module } from '@nestjs/common';
import { CoordinatorModule } from '../coordinator/coordinator.module.js';
import { StreamGateway } from './stream.gateway.js';
import { StreamUpgradeRequiredController } from './stream-upgrade-required.controller.js';

/** Provides the {@link StreamGateway}, and tells a plain `GET /v1/stream` to upgrade. */
@Module({ imports: [CoordinatorModule], providers: [StreamGateway], controllers: [StreamUpgradeRequiredController] })
export class StreamModule {}
