/** The coordinator of this boot, its outcome counters and its metrics. */
import { Module } from '@nestjs/common';
import { CoordinatorMetrics } from '../health/coordinator-metrics.js';
import { EventLogModule } from '../event-log/event-log.module.js';
import { GateLinkModule } from '../gate-link/gate-link.module.js';
import { CoordinatorHost } from './coordinator-host.js';
import { OutcomeCounters } from './outcome-counters.js';

/**
 * Provides {@link CoordinatorHost}, {@link OutcomeCounters} (stream `stats` frames) and
 * {@link CoordinatorMetrics} (`/metrics`). Imports {@link EventLogModule}, so Nest shuts this
 * module down before the event log's, and {@link GateLinkModule}, whose gate links admit
 * fence-first fences.
 */
@Module({
  imports: [EventLogModule, GateLinkModule],
  providers: [
    CoordinatorHost,
    OutcomeCounters,
    { provide: CoordinatorMetrics, useFactory: () => new CoordinatorMetrics() },
  ],
  exports: [CoordinatorHost, OutcomeCounters, CoordinatorMetrics],
})
export class CoordinatorModule {}
