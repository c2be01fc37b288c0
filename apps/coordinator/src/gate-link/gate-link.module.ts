/** The gate link `/v1/gates/link` and the registry of open links (fence-first handover). */
import { Module } from '@nestjs/common';
import { GateLinkGateway } from './gate-link.gateway.js';
import { GateLinks } from './gate-links.js';
import { GateStatuses } from './gate-statuses.js';

/**
 * Provides {@link GateLinks} (the coordinator host asks it to admit fences), {@link GateStatuses}
 * (the gates' latest reported status, for `GET /v1/gates`) and the
 * {@link GateLinkGateway} that accepts links. Imported by the coordinator module.
 */
@Module({
  providers: [
    { provide: GateStatuses, useFactory: () => new GateStatuses() },
    {
      provide: GateLinks,
      useFactory: (statuses: GateStatuses) => new GateLinks(undefined, statuses),
      inject: [GateStatuses],
    },
    GateLinkGateway,
  ],
  exports: [GateLinks, GateStatuses],
})
export class GateLinkModule {}
