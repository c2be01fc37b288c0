/** The agent link `/v1/agent`: lease operations over one WebSocket per agent. */
import { Module } from '@nestjs/common';
import { LeasesModule } from '../leases/leases.module.js';
import { AgentLinkGateway } from './agent-link.gateway.js';

/** Provides the {@link AgentLinkGateway}; the lease operations come from {@link LeasesModule} (the HTTP routes' own). */
@Module({ imports: [LeasesModule], providers: [AgentLinkGateway] })
export class AgentLinkModule {}
