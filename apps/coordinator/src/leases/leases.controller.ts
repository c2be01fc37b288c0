/**
 * Lease routes: `POST /v1/leases/:resource/{acquire,renew,release}` for agents and
 * `GET /v1/leases` for any token. Protocol schema in, one DurableCoordinator call, outcome out:
 * a grant is the reply body, signed (`signedToken`); a denial goes to the exception filter, which picks 409 / 410.
 * The holder is always the authenticated agent.
 */
import { Body, Controller, Get, HttpCode, Inject, Param, Post, UseGuards } from '@nestjs/common';
import { AcquireBodySchema, type GrantReply, type LeasesReply, type OkReply, ReleaseBodySchema, RenewBodySchema } from '@lease-fence/protocol';
import { ProtocolMisuseError } from 'lease-fence';
import type { AgentPrincipal } from '../auth/principal.js';
import { AgentGuard, CurrentPrincipal, ViewerGuard } from '../auth/role.guards.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.tokens.js';
import { CoordinatorHost } from '../coordinator/coordinator-host.js';
import { DeniedOutcome } from '../http/denied-outcome.js';
import { InvalidRequestError, parseInput } from '../http/invalid-request.error.js';
import { GrantSigner } from '../signing/grant-signer.js';
import { checkTtlMillis, parseResource } from './lease-input.js';
import { toWireDenial, toWireGrant, toWireLease } from './wire.js';

/** The 400 message of an acquire whose requestId this agent already used for another resource. */
const REQUEST_ID_REUSED = 'was already used by this agent to acquire another resource; send a fresh requestId for each acquisition (reuse one only to retry the same acquire)';

/** Acquire, renew, release, and the list of current holders. */
@Controller('v1/leases')
export class LeasesController {
  constructor(
    private readonly host: CoordinatorHost,
    @Inject(CONFIG) private readonly config: Config,
    private readonly signer: GrantSigner,
  ) {}

  /** Grants the lease to the calling agent, or denies it (`held`, `already-held` → 409; `expired` → 410). */
  @Post(':resource/acquire')
  @HttpCode(200)
  @UseGuards(AgentGuard)
  async acquire(@Param('resource') resourceParam: string, @Body() body: unknown, @CurrentPrincipal() agent: AgentPrincipal): Promise<GrantReply> {
    const resource = parseResource(resourceParam);
    const { requestId, ttlMillis } = parseInput(AcquireBodySchema, body, 'body');
    checkTtlMillis(ttlMillis, this.config);
    const outcome = await this.host.current()
      .acquire({ resource, holderId: agent.holderId, requestId, ...(ttlMillis === undefined ? {} : { ttlMillis }) })
      .catch((error: unknown) => {
        // The one misuse an agent can commit with valid fields: reusing a requestId for another
        // resource. Said in the API's words: lease-fence's message names its internal function.
        if (error instanceof ProtocolMisuseError) throw new InvalidRequestError([{ path: 'requestId', message: REQUEST_ID_REUSED }]);
        throw error;
      });
    if (!outcome.ok) throw new DeniedOutcome(toWireDenial(outcome));
    return { ok: true, grant: toWireGrant(outcome.grant, await this.signer.sign(outcome.grant)) };
  }

  /** Extends the calling agent's lease with the same fence, or denies it (`not-holder` → 409; `expired` → 410). */
  @Post(':resource/renew')
  @HttpCode(200)
  @UseGuards(AgentGuard)
  async renew(@Param('resource') resourceParam: string, @Body() body: unknown, @CurrentPrincipal() agent: AgentPrincipal): Promise<GrantReply> {
    const resource = parseResource(resourceParam);
    const { requestId, fence, ttlMillis } = parseInput(RenewBodySchema, body, 'body');
    checkTtlMillis(ttlMillis, this.config);
    const outcome = await this.host.current().renew({ resource, holderId: agent.holderId, fence, requestId, ...(ttlMillis === undefined ? {} : { ttlMillis }) });
    if (!outcome.ok) throw new DeniedOutcome(toWireDenial(outcome));
    return { ok: true, grant: toWireGrant(outcome.grant, await this.signer.sign(outcome.grant)) };
  }

  /** Releases the calling agent's lease, or denies it (`not-holder` → 409; `expired` → 410). */
  @Post(':resource/release')
  @HttpCode(200)
  @UseGuards(AgentGuard)
  async release(@Param('resource') resourceParam: string, @Body() body: unknown, @CurrentPrincipal() agent: AgentPrincipal): Promise<OkReply> {
    const resource = parseResource(resourceParam);
    const { fence } = parseInput(ReleaseBodySchema, body, 'body');
    const outcome = await this.host.current().release({ resource, holderId: agent.holderId, fence });
    if (!outcome.ok) throw new DeniedOutcome(toWireDenial(outcome));
    return { ok: true };
  }

  /** The current holders, including leases carried across a restart (in grace). */
  @Get()
  @UseGuards(ViewerGuard)
  list(): LeasesReply {
    return { leases: this.host.current().leases().map(toWireLease) };
  }
}
