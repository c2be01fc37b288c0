/** The `/v1/stream` WebSocket. */
import { Module } from '@nestjs/common';
import { CoordinatorModule } from '../coordinator/coordinator.module.js';
import { StreamGateway } from './stream.gateway.js';

/** Provides the {@link StreamGateway}. */
@Module({ imports: [CoordinatorModule], providers: [StreamGateway] })
export class StreamModule {}
