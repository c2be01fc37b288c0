/** The `/v1/stream` WebSocket. */
import { Module } from '@nestjs/common';
import { CoordinatorModule } from '../coordinator/coordinator.module.js';
import { StreamGateway } from './stream.gateway.js';

/** Provides the {@link StreamGateway} (a plain `GET /v1/stream` is answered by `websocket/upgrade-required.controller.ts`). */
@Module({ imports: [CoordinatorModule], providers: [StreamGateway] })
export class StreamModule {}
