/**
 * Gate routes: a resource's FenceGate reports refused stale writes (`FenceRejected`), floor
 * raises without a write (`FenceAdmitted`) and its current floor (`FenceFloorReported` when the
 * log has lost fences); anyone with a token may list recorded rejections.
 * A gate reports only for resources its token's patterns cover; `gateId` comes from the token.
 * Gates also report their status (floors, outbox backlog, counters), kept in memory and listed
 * by `GET /v1/gates` (observation, never appended to the log).
 */
import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import type { ImplausibleReport, RejectionReportItem } from '@lease-fence/coordinator-core';
import {
  AdmitBodySchema,
  ErrorReplySchema,
  FloorReportBodySchema,
  type FloorReportReply,
  FloorReportReplySchema,
  type GateRecoveryReply,
  GateRecoveryReplySchema,
  type GatesReply,
  GatesReplySchema,
  GateStatusBodySchema,
  NoQuerySchema,
  type OkReply,
  OkReplySchema,
  type RejectionAcceptedReply,
  RejectionAcceptedReplySchema,
  REJECTION_BATCH_MAX_ITEMS,
  RejectionBatchBodySchema,
  type RejectionBatchItem,
  type RejectionBatchReply,
  RejectionBatchReplySchema,
  RejectionBodySchema,
  type RejectionsReply,
  RejectionsReplySchema,
} from '@lease-fence/protocol';
import { ForbiddenError } from '../auth/auth.errors.js';
import type { GatePrincipal } from '../auth/principal.js';
import { CurrentPrincipal, GateGuard, ViewerGuard } from '../auth/role.guards.js';
import { CoordinatorHost } from '../coordinator/coordinator-host.js';
import { GateStatuses } from '../gate-link/gate-statuses.js';
import { ApiDoc, READ_REPLIES, REPLIES, WRITE_REPLIES } from '../docs/api-doc.js';
import { DeniedOutcome } from '../http/denied-outcome.js';
import { InvalidRequestError, parseInput } from '../http/invalid-request.error.js';
import { parseResource } from './lease-input.js';

/**
 * A gate report the coordinator refused as impossible, as a 400 naming the wire field
 * (`gateWallMillis` is `wallMillis` on the wire; the other fields have the same names), after
 * `prefix` (`items.2.` for an item of a batch).
 */
const implausibleInput = (outcome: ImplausibleReport, prefix = ''): InvalidRequestError =>
  new InvalidRequestError([
    { path: prefix + (outcome.field === 'gateWallMillis' ? 'wallMillis' : outcome.field), message: outcome.message },
  ]);

/** A report's fields as the coordinator records them: the wire's `wallMillis` is `gateWallMillis` there (see {@link implausibleInput}). */
const reportItemOf = (report: RejectionBatchItem): RejectionReportItem => ({
  seq: report.seq,
  kind: report.kind,
  rejected: report.rejected,
  current: report.current,
  ...(report.wallMillis === undefined ? {} : { gateWallMillis: report.wallMillis }),
});

/** Rejections and admits reported by gates. */
@Controller('v1')
export class GatesController {
  constructor(
    private readonly host: CoordinatorHost,
    private readonly statuses: GateStatuses,
  ) {}

  /**
   * Records a rejection; idempotent by (gate, resource, seq): the same report again answers
   * `duplicate: true` and appends nothing. Other content under a recorded seq → 409
   * `{ ok: false, reason: 'seq-conflict', message }`; a report that cannot be true (a fence never
   * issued for the resource, fences contradicting `kind`, `wallMillis` past the year 3000) → 400
   * naming the field. Neither appends anything.
   */
  @Post('resources/:resource/rejections')
  @HttpCode(202)
  @UseGuards(GateGuard)
  @ApiDoc({
    operationId: 'reportRejection',
    summary:
      'Record a FenceGate rejection (a refused stale write) as `FenceRejected`. Idempotent by (gate, resource, seq). ' +
      'Seqs of a gate and resource start at 1 and are contiguous: a seq above the next expected one is recorded with a `RejectionsMissing` event first (refusals that were lost).',
    body: RejectionBodySchema,
    replies: {
      202: {
        description: 'Recorded (or already recorded with the same content: `duplicate: true`).',
        schemas: [RejectionAcceptedReplySchema],
      },
      409: {
        description:
          '`seq-conflict`: this (gate, resource, seq) was recorded with other content; nothing was appended.',
        schemas: [ErrorReplySchema],
      },
      ...WRITE_REPLIES,
    },
  })
  async reportRejection(
    @Param('resource') resourceParam: string,
    @Body() body: unknown,
    @CurrentPrincipal() gate: GatePrincipal,
  ): Promise<RejectionAcceptedReply> {
    const resource = parseResource(resourceParam);
    const rejection = parseInput(RejectionBodySchema, body, 'body');
    if (rejection.resource !== resource) {
      throw new InvalidRequestError([
        {
          path: 'resource',
          message: `must equal the :resource path parameter ${JSON.stringify(resource)}, got ${JSON.stringify(rejection.resource)}`,
        },
      ]);
    }
    const recorded = await this.host.current().recordRejection({
      gateId: gate.gateId,
      resource,
      ...reportItemOf(rejection),
    });
    if (!recorded.ok) {
      if (recorded.reason === 'implausible') throw implausibleInput(recorded);
      throw new DeniedOutcome({ ok: false, reason: recorded.reason, message: recorded.message });
    }
    return { ok: true, duplicate: recorded.duplicate };
  }

  /**
   * Records the refusals waiting in a gate's outbox (seqs strictly ascending) as ONE command: one
   * group commit for the batch. Each item is decided by the single route's rules: a resend
   * answers `duplicate: true` and appends nothing; other content under a recorded seq is
   * `{ ok: false, reason: 'seq-conflict' }` for that item only; a gap before an item is recorded
   * as `RejectionsMissing` first. All or nothing for a report that cannot be true: one implausible
   * item is a 400 naming `items.<i>.<field>` and nothing of the request is appended (a gate that
   * sends one impossible report is broken, and a partly recorded batch would leave it guessing
   * which seqs the log holds; the gate then sends its items one by one and drops only that one).
   */
  @Post('resources/:resource/rejections/batch')
  @HttpCode(202)
  @UseGuards(GateGuard)
  @ApiDoc({
    operationId: 'reportRejections',
    summary:
      `Record up to ${REJECTION_BATCH_MAX_ITEMS} FenceGate rejections of one resource (seqs strictly ascending) in one request and one group commit. ` +
      'Each item as `reportRejection` decides it (idempotent by (gate, resource, seq), a gap recorded as `RejectionsMissing` first); ' +
      'a seq-conflict refuses that item only (in the reply); one implausible item refuses the whole request (400 naming `items.<i>.<field>`, nothing appended).',
    body: RejectionBatchBodySchema,
    replies: {
      202: {
        description:
          'Decided: one outcome per item, in order (`duplicate` as for `reportRejection`, or `seq-conflict` for an item recorded with other content).',
        schemas: [RejectionBatchReplySchema],
      },
      ...WRITE_REPLIES,
    },
  })
  async reportRejections(
    @Param('resource') resourceParam: string,
    @Body() body: unknown,
    @CurrentPrincipal() gate: GatePrincipal,
  ): Promise<RejectionBatchReply> {
    const resource = parseResource(resourceParam);
    const { items } = parseInput(RejectionBatchBodySchema, body, 'body');
    const recorded = await this.host.current().recordRejections({
      gateId: gate.gateId,
      resource,
      items: items.map(reportItemOf),
    });
    if (!recorded.ok) throw implausibleInput(recorded, `items.${recorded.index}.`);
    return { ok: true, items: [...recorded.items] };
  }

  /**
   * Records that the gate raised its floor to `fence` for `holderId` without a write; 400 naming
   * the field when that fence was never issued for the resource, or is its current fence but
   * another holder's (nothing appended).
   */
  @Post('resources/:resource/admit')
  @HttpCode(202)
  @UseGuards(GateGuard)
  @ApiDoc({
    operationId: 'reportAdmit',
    summary: 'Record that a gate raised its floor to a fence without a write, as `FenceAdmitted`.',
    body: AdmitBodySchema,
    replies: { 202: { description: 'Recorded.', schemas: [OkReplySchema] }, ...WRITE_REPLIES },
  })
  async admit(
    @Param('resource') resourceParam: string,
    @Body() body: unknown,
    @CurrentPrincipal() gate: GatePrincipal,
  ): Promise<OkReply> {
    const resource = parseResource(resourceParam);
    const { holderId, fence } = parseInput(AdmitBodySchema, body, 'body');
    const admitted = await this.host.current().admitFence({ gateId: gate.gateId, resource, holderId, fence });
    if (!admitted.ok) throw implausibleInput(admitted);
    return { ok: true };
  }

  /**
   * The gate's current floor. Above every fence the log issued for the resource (the log was
   * lost, or restored from an old backup), the fence counter rises above it and a
   * `FenceFloorReported` event is durable before the reply (`raised: true`); otherwise nothing is
   * appended. `fenceCounter`: the next grant gets a higher fence. 400 naming `fence` when it is
   * too large to leave room above it.
   */
  @Post('resources/:resource/floor')
  @HttpCode(202)
  @UseGuards(GateGuard)
  @ApiDoc({
    operationId: 'reportFloor',
    summary:
      "Report the gate's current floor. Above every fence the log issued for the resource (the log was lost), it raises the fence counter above it " +
      '(`FenceFloorReported`), so no earlier fence is issued again; otherwise nothing is appended. Idempotent.',
    body: FloorReportBodySchema,
    replies: {
      202: { description: 'Known, or raised (durable).', schemas: [FloorReportReplySchema] },
      ...WRITE_REPLIES,
    },
  })
  async reportFloor(
    @Param('resource') resourceParam: string,
    @Body() body: unknown,
    @CurrentPrincipal() gate: GatePrincipal,
  ): Promise<FloorReportReply> {
    const resource = parseResource(resourceParam);
    const { holderId, fence } = parseInput(FloorReportBodySchema, body, 'body');
    const reported = await this.host.current().reportFloor({ gateId: gate.gateId, resource, holderId, fence });
    if (!reported.ok) throw implausibleInput(reported);
    return { ok: true, raised: reported.raised, fenceCounter: reported.fenceCounter };
  }

  /**
   * What the calling gate reconciles with at its start, before it admits a write: the latest
   * fence granted on the resource (with its holder while it is the current lease) and the last
   * refusal seq of this gate on it that the log recorded. A read: nothing is appended.
   */
  @Get('resources/:resource/gate-recovery')
  @UseGuards(GateGuard)
  @ApiDoc({
    operationId: 'gateRecovery',
    summary:
      "For the calling gate, at its start: the latest fence granted on the resource (its holder while that lease is current, else `null`) and the gate's last refusal seq the log recorded. " +
      'A gate whose data directory was emptied or restored from an old backup raises its floor to that fence and numbers its next refusal above that seq before it admits any write. Nothing is appended.',
    query: NoQuerySchema,
    replies: {
      200: { description: 'The latest grant and the last refusal seq.', schemas: [GateRecoveryReplySchema] },
      400: REPLIES.badInput,
      ...READ_REPLIES,
    },
  })
  gateRecovery(
    @Param('resource') resourceParam: string,
    @Query() query: unknown,
    @CurrentPrincipal() gate: GatePrincipal,
  ): GateRecoveryReply {
    const resource = parseResource(resourceParam);
    parseInput(NoQuerySchema, query, 'query');
    const { latestGrant, lastRejectionSeq } = this.host.current().gateRecovery(gate.gateId, resource);
    return {
      ok: true,
      resource,
      latestGrant:
        latestGrant === undefined ? null : { holderId: latestGrant.holderId ?? null, fence: latestGrant.fence },
      lastRejectionSeq,
    };
  }

  /** Recorded rejections, oldest first (the coordinator keeps the most recent ones). */
  @Get('rejections')
  @UseGuards(ViewerGuard)
  @ApiDoc({
    operationId: 'listRejections',
    summary: 'Recorded fence rejections, oldest first (the most recent ones).',
    query: NoQuerySchema,
    replies: {
      200: { description: 'Rejections.', schemas: [RejectionsReplySchema] },
      400: REPLIES.badInput,
      ...READ_REPLIES,
    },
  })
  rejections(@Query() query: unknown): RejectionsReply {
    parseInput(NoQuerySchema, query, 'query');
    return { rejections: [...this.host.current().rejections()] };
  }

  /**
   * Keeps the gate's status (`./gate-statuses.ts`): observation, not appended to the log. The same
   * report a gate sends as a `status` frame on its gate link, for a gate whose link is not open.
   * 400 naming the field for a malformed body; 403 naming it for a resource outside the gate
   * token's patterns, as for every gate report (nothing kept).
   */
  @Post('gates/status')
  @HttpCode(202)
  @UseGuards(GateGuard)
  @ApiDoc({
    operationId: 'reportGateStatus',
    summary:
      "Report the gate's status: per resource its floor, outbox backlog, refusals and invalid tokens. Kept in memory (latest per gate and resource, " +
      'listed by `GET /v1/gates`), never appended to the log. Gates with an open gate link send it there as a `status` frame instead.',
    body: GateStatusBodySchema,
    replies: { 202: { description: 'Kept.', schemas: [OkReplySchema] }, ...WRITE_REPLIES },
  })
  reportStatus(@Body() body: unknown, @CurrentPrincipal() gate: GatePrincipal): OkReply {
    const status = parseInput(GateStatusBodySchema, body, 'body');
    const refused = this.statuses.record(gate, status);
    if (refused?.kind === 'forbidden') throw new ForbiddenError(`${refused.field}: ${refused.message}`);
    if (refused !== undefined) throw new InvalidRequestError([{ path: refused.field, message: refused.message }]);
    return { ok: true };
  }

  /** Every gate that reported its status since this coordinator started, with the coordinator's time of its last report. */
  @Get('gates')
  @UseGuards(ViewerGuard)
  @ApiDoc({
    operationId: 'listGates',
    summary:
      'The gates that reported their status since this coordinator started: per gate and resource the floor (holder, fence), outbox backlog, ' +
      "refusals (the gate's last refusal seq) and invalid tokens (since the gate process started), the gate's report time and the coordinator's time of that report (`lastContactMillis`). " +
      'Observation kept in memory, not facts of the log: empty after a restart until the gates report again.',
    query: NoQuerySchema,
    replies: {
      200: { description: 'Gates, by gate id.', schemas: [GatesReplySchema] },
      400: REPLIES.badInput,
      ...READ_REPLIES,
    },
  })
  gates(@Query() query: unknown): GatesReply {
    parseInput(NoQuerySchema, query, 'query');
    return this.statuses.list();
  }
}
