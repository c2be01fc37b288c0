/** `/healthz`, `/readyz`, `/metrics`. */
import { Module } from '@nestjs/common';
import { CoordinatorModule } from '../coordinator/coordinator.module.js';
import { HealthController } from './health.controller.js';

/** Probes and metrics. */
@Module({ imports: [CoordinatorModule], controllers: [HealthController] })
export class HealthModule {}
