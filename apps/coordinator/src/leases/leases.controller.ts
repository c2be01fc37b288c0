/**
 * Lease routes: `POST /v1/leases/:resource/{acquire,renew,release}` for agents and
 * `GET /v1/leases` for any token. Each write route calls {@link LeaseOperations} (the agent link
 * `/v1/agent` calls the same): protocol schema in, one DurableCoordinator call, outcome out:
 * a grant is the reply body, signed (`signedToken`); a denial goes to the exception filter, which picks 409 / 410.
 * The holder is always the authenticated agent.
 */
import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import {
  AcquireBodySchema,
  AlreadyHeldReplySchema,
  ExpiredReplySchema,
  type GrantReply,
  GrantReplySchema,
  HeldReplySchema,
  type LeasesReply,
  LeasesReplySchema,
  LockDelayReplySchema,
  NotHolderReplySchema,
  NoQuerySchema,
  type OkReply,
  OkReplySchema,
  ReleaseBodySchema,
  RenewBodySchema,
} from '@lease-fence/protocol';
import type { AgentPrincipal } from '../auth/principal.js';
import { AgentGuard, CurrentPrincipal, ViewerGuard } from '../auth/role.guards.js';
import { CoordinatorHost } from '../coordinator/coordinator-host.js';
import { ApiDoc, READ_REPLIES, REPLIES, WRITE_REPLIES } from '../docs/api-doc.js';
import { parseInput } from '../http/invalid-request.error.js';
import { LeaseOperations } from './lease-operations.js';
import { toWireLease } from './wire.js';

/** The 409 of a renew or release by an agent that does not hold the fence it names. */
const NOT_HOLDER = { description: 'The caller does not hold that fence.', schemas: [NotHolderReplySchema] };

/** Acquire, renew, release, and the list of current holders. */
@Controller('v1/leases')
export class LeasesController {
  constructor(
    private readonly host: CoordinatorHost,
    private readonly operations: LeaseOperations,
  ) {}

  /** Grants the lease to the calling agent, or denies it (`held`, `already-held` → 409; `expired` → 410). */
  @Post(':resource/acquire')
  @HttpCode(200)
  @UseGuards(AgentGuard)
  @ApiDoc({
    operationId: 'acquireLease',
    summary:
      'Acquire a lease for the authenticated agent. A retry with the same requestId gets the same grant while that lease is current.',
    body: AcquireBodySchema,
    replies: {
      200: {
        description:
          'Granted: a new fence, strictly above every fence issued before (or the existing grant for a retried requestId, with the same `signedToken`).',
        schemas: [GrantReplySchema],
      },
      409: {
        description:
          'Held by another holder (`held`), already held by the caller (`already-held`, never a second fence), or in its lock-delay after its holder was lost uncleanly (`lock-delay`, see `LEASE_FENCE_LOCK_DELAY`). `retryAfterMillis` says when to try again.',
        schemas: [HeldReplySchema, AlreadyHeldReplySchema, LockDelayReplySchema],
      },
      410: {
        description: 'The requestId was granted before and that lease has ended: never a fresh grant for it.',
        schemas: [ExpiredReplySchema],
      },
      ...WRITE_REPLIES,
      503: {
        ...REPLIES.unavailable,
        description:
          'The coordinator cannot serve (`reason` as for every route), or, on a resource of `LEASE_FENCE_FENCE_FIRST`, `fence-unavailable`: no gate admitted the new `fence` in time; it is burned and a retry (even with the same requestId) gets a higher one. `retryable: true`.',
      },
    },
  })
  acquire(
    @Param('resource') resourceParam: string,
    @Body() body: unknown,
    @CurrentPrincipal() agent: AgentPrincipal,
  ): Promise<GrantReply> {
    return this.operations.acquire(resourceParam, body, agent);
  }

  /** Extends the calling agent's lease with the same fence, or denies it (`not-holder` → 409; `expired` → 410). */
  @Post(':resource/renew')
  @HttpCode(200)
  @UseGuards(AgentGuard)
  @ApiDoc({
    operationId: 'renewLease',
    summary: "Extend the caller's lease; the fence is unchanged.",
    body: RenewBodySchema,
    replies: {
      200: { description: 'Renewed (same fence, same `signedToken`).', schemas: [GrantReplySchema] },
      409: NOT_HOLDER,
      410: {
        description: 'That generation has ended (expired, released, superseded): never resurrected.',
        schemas: [ExpiredReplySchema],
      },
      ...WRITE_REPLIES,
    },
  })
  renew(
    @Param('resource') resourceParam: string,
    @Body() body: unknown,
    @CurrentPrincipal() agent: AgentPrincipal,
  ): Promise<GrantReply> {
    return this.operations.renew(resourceParam, body, agent);
  }

  /** Releases the calling agent's lease, or denies it (`not-holder` → 409; `expired` → 410). */
  @Post(':resource/release')
  @HttpCode(200)
  @UseGuards(AgentGuard)
  @ApiDoc({
    operationId: 'releaseLease',
    summary: "Give the caller's lease back before its expiry.",
    body: ReleaseBodySchema,
    replies: {
      200: { description: 'Released.', schemas: [OkReplySchema] },
      409: NOT_HOLDER,
      410: {
        description: 'That generation has ended (expired, released, superseded); releasing it again changes nothing.',
        schemas: [ExpiredReplySchema],
      },
      ...WRITE_REPLIES,
    },
  })
  release(
    @Param('resource') resourceParam: string,
    @Body() body: unknown,
    @CurrentPrincipal() agent: AgentPrincipal,
  ): Promise<OkReply> {
    return this.operations.release(resourceParam, body, agent);
  }

  /** The current holders, including leases carried across a restart (in grace). */
  @Get()
  @UseGuards(ViewerGuard)
  @ApiDoc({
    operationId: 'listLeases',
    summary: 'Current holders, including leases carried across a restart (in their grace period).',
    query: NoQuerySchema,
    replies: {
      200: { description: 'Current holders.', schemas: [LeasesReplySchema] },
      400: REPLIES.badInput,
      ...READ_REPLIES,
    },
  })
  list(@Query() query: unknown): LeasesReply {
    parseInput(NoQuerySchema, query, 'query');
    return { leases: this.host.current().leases().map(toWireLease) };
  }
}
