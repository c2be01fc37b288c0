/**
 * The core of the lease routes, shared by both transports: the HTTP controller
 * (`leases.controller.ts`) and the agent link (`agent-link/agent-link.gateway.ts`) call these
 * same functions, so validation, the holder rule, idempotency by requestId and the error mapping
 * exist once. Each takes the raw `:resource` and body as received, parses them with the
 * protocol's schemas, makes one DurableCoordinator call (its promise settles only after the
 * batch's append is durable), and returns the 200 body or throws what the one error mapping
 * (`http/api-exception.filter.ts`, `decideReply`) turns into a status: `InvalidRequestError` →
 * 400, `DeniedOutcome` → 409 / 410 / 503, the coordinator's unavailability → 503.
 */
import { Inject, Injectable } from '@nestjs/common';
import {
  AcquireBodySchema,
  type GrantReply,
  type OkReply,
  ReleaseBodySchema,
  RenewBodySchema,
} from '@lease-fence/protocol';
import { ProtocolMisuseError } from 'lease-fence';
import type { AgentPrincipal } from '../auth/principal.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.tokens.js';
import { CoordinatorHost } from '../coordinator/coordinator-host.js';
import { DeniedOutcome } from '../http/denied-outcome.js';
import { InvalidRequestError, parseInput } from '../http/invalid-request.error.js';
import { GrantSigner } from '../signing/grant-signer.js';
import { checkTtlMillis, parseResource } from './lease-input.js';
import { toWireDenial, toWireGrant } from './wire.js';

/** The 400 message of an acquire whose requestId this agent already used for another resource. */
const REQUEST_ID_REUSED =
  'was already used by this agent to acquire another resource; send a fresh requestId for each acquisition (reuse one only to retry the same acquire)';

/** Acquire, renew and release for an authenticated agent; the holder is always `agent.holderId`. */
@Injectable()
export class LeaseOperations {
  constructor(
    private readonly host: CoordinatorHost,
    @Inject(CONFIG) private readonly config: Config,
    private readonly signer: GrantSigner,
  ) {}

  /**
   * Grants `resource` to `agent`, or the grant already made for this requestId.
   * @param resourceParam - The `:resource` as received (checked like every id).
   * @param body - The request body as received (checked by `AcquireBodySchema`).
   * @throws {@link InvalidRequestError} (400) naming the field; {@link DeniedOutcome} for
   *   `held` / `already-held` / `lock-delay` (409), `expired` (410), `fence-unavailable` (503);
   *   the coordinator's unavailability errors (503).
   */
  async acquire(resourceParam: string | undefined, body: unknown, agent: AgentPrincipal): Promise<GrantReply> {
    const resource = parseResource(resourceParam);
    const { requestId, ttlMillis } = parseInput(AcquireBodySchema, body, 'body');
    checkTtlMillis(ttlMillis, this.config);
    const outcome = await this.host
      .current()
      .acquire({ resource, holderId: agent.holderId, requestId, ...(ttlMillis === undefined ? {} : { ttlMillis }) })
      .catch((error: unknown) => {
        // The one misuse an agent can commit with valid fields: reusing a requestId for another
        // resource. Said in the API's words: lease-fence's message names its internal function.
        if (error instanceof ProtocolMisuseError)
          throw new InvalidRequestError([{ path: 'requestId', message: REQUEST_ID_REUSED }]);
        throw error;
      });
    if (!outcome.ok) throw new DeniedOutcome(toWireDenial(outcome));
    return { ok: true, grant: toWireGrant(outcome.grant, await this.signer.sign(outcome.grant)) };
  }

  /**
   * Extends `agent`'s lease on `resource` with the same fence.
   * @throws like {@link LeaseOperations.acquire}; denials `not-holder` (409), `expired` (410).
   */
  async renew(resourceParam: string | undefined, body: unknown, agent: AgentPrincipal): Promise<GrantReply> {
    const resource = parseResource(resourceParam);
    const { requestId, fence, ttlMillis } = parseInput(RenewBodySchema, body, 'body');
    checkTtlMillis(ttlMillis, this.config);
    const outcome = await this.host.current().renew({
      resource,
      holderId: agent.holderId,
      fence,
      requestId,
      ...(ttlMillis === undefined ? {} : { ttlMillis }),
    });
    if (!outcome.ok) throw new DeniedOutcome(toWireDenial(outcome));
    return { ok: true, grant: toWireGrant(outcome.grant, await this.signer.sign(outcome.grant)) };
  }

  /**
   * Releases `agent`'s lease on `resource`.
   * @throws like {@link LeaseOperations.acquire}; denials `not-holder` (409), `expired` (410).
   */
  async release(resourceParam: string | undefined, body: unknown, agent: AgentPrincipal): Promise<OkReply> {
    const resource = parseResource(resourceParam);
    const { fence } = parseInput(ReleaseBodySchema, body, 'body');
    const outcome = await this.host.current().release({ resource, holderId: agent.holderId, fence });
    if (!outcome.ok) throw new DeniedOutcome(toWireDenial(outcome));
    return { ok: true };
  }
}
