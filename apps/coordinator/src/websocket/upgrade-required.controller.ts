/**
 * A plain `GET` (no WebSocket upgrade) on one of the WebSocket paths, `/v1/stream`, the gate
 * link `/v1/gates/link` and the agent link `/v1/agent`: told how to connect (426 Upgrade Required, `Upgrade: websocket`) instead
 * of a bare 404. The WebSockets themselves are answered on the HTTP server's `upgrade` event
 * (`websocket/websocket-upgrades.ts`) and never reach the routes.
 */
import { Controller, Get, HttpException } from '@nestjs/common';
import {
  AGENT_LINK_PATH,
  AGENT_LINK_SUBPROTOCOL,
  AgentReplyFrameSchema,
  CoordinatorToGateFrameSchema,
  GATE_LINK_PATH,
  StreamMessageSchema,
  StreamQuerySchema,
} from '@lease-fence/protocol';
import { ApiDoc, REPLIES } from '../docs/api-doc.js';
import { STREAM_PATH } from '../stream/stream-path.js';

/** HTTP 426 Upgrade Required (RFC 9110 § 15.5.22; Nest's HttpStatus has no name for it). */
export const UPGRADE_REQUIRED = 426;

/** 426 for a plain `GET` on a WebSocket path. */
@Controller()
export class UpgradeRequiredController {
  /** @throws HttpException 426 (`error: 'upgrade-required'`), always, naming how to connect. */
  @Get(STREAM_PATH)
  @ApiDoc({
    operationId: 'openStream',
    role: 'viewer',
    summary:
      'WebSocket (upgrade): every log event after `after`, then `caught-up`, then live events, heartbeats and `stats` about once a second. ' +
      'A slow consumer is sent `closing` and disconnected; resume with `after` = the last position received. The token may be the `token` query parameter or the Authorization header. ' +
      'With `batch=1` the frames sent in one turn of the server come as one `batch` message (`frames`, in order); without it, one message per frame.',
    query: StreamQuerySchema,
    replies: {
      101: {
        description: 'Switching protocols; frames are JSON text messages (`batch` messages only with `batch=1`).',
        schemas: [StreamMessageSchema],
      },
      400: REPLIES.badInput,
      401: REPLIES.unauthenticated,
      426: REPLIES.upgradeRequired,
      503: REPLIES.shuttingDown,
    },
  })
  stream(): never {
    throw new HttpException(
      `${STREAM_PATH} is a WebSocket: connect with a WebSocket client (GET with Upgrade: websocket), ${STREAM_PATH}?after=<position>&token=<viewer token>`,
      UPGRADE_REQUIRED,
    );
  }

  /** @throws HttpException 426 (`error: 'upgrade-required'`), always, naming how to connect. */
  @Get(GATE_LINK_PATH)
  @ApiDoc({
    operationId: 'openGateLink',
    role: 'gate',
    summary:
      "WebSocket (upgrade) for fence-first handover: the gate sends `guard` (its resources, within its token's patterns) and answers each `admit` with `admitted` once its raised floor is durable. " +
      "Frames are the protocol's gate-link schemas; a frame the coordinator cannot accept gets an `error` frame naming the field and changes nothing. The coordinator pings the link; a gate that does not answer is disconnected. The token may be the `token` query parameter or the Authorization header.",
    replies: {
      101: {
        description: 'Switching protocols; frames are JSON text messages.',
        schemas: [CoordinatorToGateFrameSchema],
      },
      401: REPLIES.unauthenticated,
      403: REPLIES.forbidden,
      426: REPLIES.upgradeRequired,
      503: REPLIES.shuttingDown,
    },
  })
  gateLink(): never {
    throw new HttpException(
      `${GATE_LINK_PATH} is a WebSocket: connect with a WebSocket client (GET with Upgrade: websocket) and a gate token (Authorization: Bearer, or ?token=)`,
      UPGRADE_REQUIRED,
    );
  }

  /** @throws HttpException 426 (`error: 'upgrade-required'`), always, naming how to connect. */
  @Get(AGENT_LINK_PATH)
  @ApiDoc({
    operationId: 'openAgentLink',
    role: 'agent',
    summary:
      `WebSocket (upgrade, subprotocol \`${AGENT_LINK_SUBPROTOCOL}\`): lease operations over one connection per agent. ` +
      "Each text frame `{ id, op: acquire|renew|release, resource, body }` (body: the HTTP route's body) is answered by `{ id, status, body }` with the status and body the HTTP route answers, in any order, once durable. " +
      'The token may be the `token` query parameter or the Authorization header.',
    replies: {
      101: { description: 'Switching protocols; frames are JSON text messages.', schemas: [AgentReplyFrameSchema] },
      400: REPLIES.badInput,
      401: REPLIES.unauthenticated,
      403: REPLIES.forbidden,
      426: REPLIES.upgradeRequired,
      503: REPLIES.shuttingDown,
    },
  })
  agentLink(): never {
    throw new HttpException(
      `${AGENT_LINK_PATH} is a WebSocket: connect with a WebSocket client (GET with Upgrade: websocket, Sec-WebSocket-Protocol: ${AGENT_LINK_SUBPROTOCOL}) and an agent token (Authorization: Bearer, or ?token=)`,
      UPGRADE_REQUIRED,
    );
  }
}
