/**
 * Probes and metrics: `GET /healthz` (the process is up; no token), `GET /readyz` (200 once
 * recovery has finished, 503 with the reason otherwise; no token), `GET /metrics` (Prometheus
 * text; any token).
 */
import { Controller, Get, Res, UseGuards } from '@nestjs/common';
import type { ReadinessReply } from '@lease-fence/protocol';
import { ViewerGuard } from '../auth/role.guards.js';
import { CoordinatorHost } from '../coordinator/coordinator-host.js';
import { CoordinatorMetrics } from './coordinator-metrics.js';

/** The parts of the (Express) response these routes set. */
interface StatusTarget {
  status(code: number): unknown;
  setHeader(name: string, value: string): unknown;
}

/** Liveness, readiness, metrics. */
@Controller()
export class HealthController {
  constructor(
    private readonly host: CoordinatorHost,
    private readonly metrics: CoordinatorMetrics,
  ) {}

  /** Always 200 while the process serves HTTP. */
  @Get('healthz')
  healthz(): { status: 'up' } {
    return { status: 'up' };
  }

  /**
   * 200 `{ ready: true }` once recovery has finished and while the coordinator may grant; otherwise
   * 503 with `status` and `reason`. A probe answer rather than an error, so it sets its own status.
   */
  @Get('readyz')
  readyz(@Res({ passthrough: true }) response: StatusTarget): ReadinessReply {
    const readiness = this.host.readiness();
    if (!readiness.ready) response.status(503);
    return readiness;
  }

  /** Prometheus exposition text. */
  @Get('metrics')
  @UseGuards(ViewerGuard)
  async prometheus(@Res({ passthrough: true }) response: StatusTarget): Promise<string> {
    response.setHeader('content-type', this.metrics.registry.contentType);
    return this.metrics.registry.metrics();
  }
}
