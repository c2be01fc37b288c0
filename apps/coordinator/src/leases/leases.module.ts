/** The `/v1` HTTP routes: leases, gate reports, history. */
import { Module } from '@nestjs/common';
import { CoordinatorModule } from '../coordinator/coordinator.module.js';
import { GateLinkModule } from '../gate-link/gate-link.module.js';
import { EventsController } from './events.controller.js';
import { GatesController } from './gates.controller.js';
import { LeasesController } from './leases.controller.js';
import { LeaseOperations } from './lease-operations.js';
import { WhoAmIController } from './whoami.controller.js';

/**
 * The controllers and {@link LeaseOperations} (exported: the agent link calls the same code); the
 * coordinator comes from {@link CoordinatorModule}, the gates' statuses from {@link GateLinkModule}.
 */
@Module({
  imports: [CoordinatorModule, GateLinkModule],
  controllers: [LeasesController, GatesController, EventsController, WhoAmIController],
  providers: [LeaseOperations],
  exports: [LeaseOperations],
})
export class LeasesModule {}
