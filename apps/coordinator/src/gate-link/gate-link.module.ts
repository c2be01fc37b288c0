/** The gate link `/v1/gates/link` and the registry of open links (fence-first handover). */
import { Module } from '@nestjs/common';
import { GateLinkGateway } from './gate-link.gateway.js';
import { GateLinks } from './gate-links.js';

/**
 * Provides {@link GateLinks} (the coordinator host asks it to admit fences) and the
 * {@link GateLinkGateway} that accepts links. Imported by the coordinator module.
 */
@Module({
  providers: [{ provide: GateLinks, useFactory: () => new GateLinks() }, GateLinkGateway],
  exports: [GateLinks],
})
export class GateLinkModule {}
