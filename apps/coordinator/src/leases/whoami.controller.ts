/**
 * `GET /v1/whoami`: who the caller's token authenticates as. Lets a client configured with a token
 * alone (the `lease-fence` command line, the MCP server) learn its holder id and check its role
 * before it acts.
 */
import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { NoQuerySchema, type WhoAmIReply, WhoAmIReplySchema } from '@lease-fence/protocol';
import type { Principal } from '../auth/principal.js';
import { CurrentPrincipal, ViewerGuard } from '../auth/role.guards.js';
import { ApiDoc, READ_REPLIES, REPLIES } from '../docs/api-doc.js';
import { parseInput } from '../http/invalid-request.error.js';

/** The caller's principal, as the tokens file lists it (without the token). */
@Controller('v1/whoami')
export class WhoAmIController {
  /** The role of the caller's token, with an agent's holder id or a gate's id and resource patterns. */
  @Get()
  @UseGuards(ViewerGuard)
  @ApiDoc({
    operationId: 'whoAmI',
    summary:
      "Who the bearer token authenticates as: its role, an agent's `holderId` (the holder of every lease it takes), a gate's `gateId` and resource patterns.",
    query: NoQuerySchema,
    replies: {
      200: { description: "The token's principal (never the token).", schemas: [WhoAmIReplySchema] },
      400: REPLIES.badInput,
      ...READ_REPLIES,
    },
  })
  whoAmI(@Query() query: unknown, @CurrentPrincipal() principal: Principal): WhoAmIReply {
    parseInput(NoQuerySchema, query, 'query');
    switch (principal.role) {
      case 'agent':
        return { role: 'agent', holderId: principal.holderId };
      case 'gate':
        return { role: 'gate', gateId: principal.gateId, resources: [...principal.resources] };
      case 'viewer':
        return { role: 'viewer' };
    }
  }
}
