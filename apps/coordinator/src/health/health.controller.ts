/**
 * Probes and metrics: `GET /healthz` (the process is up; no token), `GET /readyz` (200 once
 * recovery has finished, 503 with the reason otherwise; no token), `GET /metrics` (Prometheus
 * text; any token).
 */
import { Controller, Get, Res, UseGuards } from '@nestjs/common';
import { type ReadinessReply, ReadinessReplySchema } from '@lease-fence/protocol';
import { ViewerGuard } from '../auth/role.guards.js';
import { CoordinatorHost } from '../coordinator/coordinator-host.js';
import { ApiDoc, REPLIES } from '../docs/api-doc.js';
import { CoordinatorMetrics } from './coordinator-metrics.js';

/** The parts of the (Fastify) reply these routes set. */
interface StatusTarget {
  status(code: number): unknown;
  header(name: string, value: string): unknown;
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
  @ApiDoc({ operationId: 'healthz', summary: 'The process is up.', replies: { 200: { description: 'Up.' } } })
  healthz(): { status: 'up' } {
    return { status: 'up' };
  }

  /**
   * 200 `{ ready: true }` once recovery has finished and while the coordinator may grant; otherwise
   * 503 with `status` and `reason`. A probe answer rather than an error, so it sets its own status.
   */
  @Get('readyz')
  @ApiDoc({
    operationId: 'readyz',
    summary: 'Ready once recovery has finished; 503 with the reason while recovering or when superseded/unhealthy.',
    replies: {
      200: { description: 'Ready.', schemas: [ReadinessReplySchema] },
      503: { description: 'Not ready.', schemas: [ReadinessReplySchema] },
    },
  })
  readyz(@Res({ passthrough: true }) response: StatusTarget): ReadinessReply {
    const readiness = this.host.readiness();
    if (!readiness.ready) response.status(503);
    return readiness;
  }

  /** Prometheus exposition text. */
  @Get('metrics')
  @UseGuards(ViewerGuard)
  @ApiDoc({
    operationId: 'metrics',
    summary:
      'Prometheus text: grants, renewals, denials by reason, rejections, append latency, group-commit batch sizes, recovery duration.',
    replies: { 200: { description: 'Prometheus exposition format.', schemas: 'text' }, 401: REPLIES.unauthenticated },
  })
  async prometheus(@Res({ passthrough: true }) response: StatusTarget): Promise<string> {
    response.header('content-type', this.metrics.registry.contentType);
    return this.metrics.registry.metrics();
  }
}
