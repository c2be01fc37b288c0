/**
 * Frames of the agent link `/v1/agent`: one long-lived WebSocket per agent (subprotocol
 * {@link AGENT_LINK_SUBPROTOCOL}) carrying many lease operations at once, each tagged with a
 * frame `id`; replies come in any order, tagged with the same `id`.
 *
 * A request frame names the HTTP route it stands for: `op` is the route's last segment
 * (`POST /v1/leases/:resource/<op>`), `resource` its `:resource`, and `body` is checked by that
 * route's body schema ({@link AGENT_OP_BODY_SCHEMAS}: the same objects the HTTP routes use). The
 * reply carries the status and the body HTTP would have answered, so idempotency by `requestId`,
 * denials (409 / 410), bad input (400 naming the field) and 503 mean exactly what they mean over
 * HTTP. A frame whose envelope cannot be read gets a 400 reply whose `id` is the frame's when it
 * was readable and not in flight, else `null`; a frame reusing an id in flight is refused with
 * `id: null` too (its own id belongs to the operation in flight). Either changes nothing.
 */
import { z } from 'zod';
import { AcquireBodySchema, ReleaseBodySchema, RenewBodySchema } from './http.js';

/** The path of the agent link. */
export const AGENT_LINK_PATH = '/v1/agent';

/**
 * The WebSocket subprotocol of the agent link (`Sec-WebSocket-Protocol`). Versioned: a frame
 * format that changes incompatibly gets a new name, and an upgrade that does not offer a name
 * the coordinator speaks is refused with 400 naming `sec-websocket-protocol`.
 */
export const AGENT_LINK_SUBPROTOCOL = 'lease-fence.agent.v1';

/** The operations of the agent link: the lease routes `POST /v1/leases/:resource/<op>`. */
export const AGENT_OPS = ['acquire', 'renew', 'release'] as const;
/** One of {@link AGENT_OPS}. */
export type AgentOp = (typeof AGENT_OPS)[number];

/** The body schema of each operation: the HTTP route's own (one copy of each check). */
export const AGENT_OP_BODY_SCHEMAS = {
  acquire: AcquireBodySchema,
  renew: RenewBodySchema,
  release: ReleaseBodySchema,
} as const satisfies Readonly<Record<AgentOp, z.ZodType>>;

/** A frame id: chosen by the agent, a positive safe integer, echoed by the reply. */
export const FrameIdSchema = z
  .number({ error: 'must be a number' })
  // zod's integer check also refuses an unsafe integer (too_big): say which rule it broke.
  .int({
    error: (issue) =>
      issue.code === 'too_big' ? `must be a safe integer (at most ${Number.MAX_SAFE_INTEGER})` : 'must be an integer',
  })
  .positive('must be positive')
  .max(Number.MAX_SAFE_INTEGER, 'must be a safe integer');

/**
 * The envelope of a request frame, checked before its body: `body` is then checked by
 * {@link AGENT_OP_BODY_SCHEMAS}[op] exactly as the HTTP route checks its JSON body (so the 400
 * names `requestId`, not `body.requestId`, as HTTP does), and `resource` as the route checks
 * its `:resource` path parameter.
 */
export const AgentRequestEnvelopeSchema = z.strictObject({
  id: FrameIdSchema,
  op: z.enum(AGENT_OPS, { error: `must be one of ${AGENT_OPS.join(', ')}` }),
  resource: z.string({ error: 'must be a string' }),
  body: z.unknown(),
});

/** agent → coordinator: one lease operation (the whole frame, body included). */
export const AgentRequestFrameSchema = z.discriminatedUnion('op', [
  AgentRequestEnvelopeSchema.extend({ op: z.literal('acquire'), body: AGENT_OP_BODY_SCHEMAS.acquire }),
  AgentRequestEnvelopeSchema.extend({ op: z.literal('renew'), body: AGENT_OP_BODY_SCHEMAS.renew }),
  AgentRequestEnvelopeSchema.extend({ op: z.literal('release'), body: AGENT_OP_BODY_SCHEMAS.release }),
]);
/** The parsed shape of {@link AgentRequestFrameSchema}. */
export type AgentRequestFrame = z.infer<typeof AgentRequestFrameSchema>;

/**
 * coordinator → agent: the answer to request `id` (`null` when the frame's id could not be
 * read or was already in flight), with the HTTP status and body the route would have answered (`GrantReply`, a denial,
 * or an `ErrorReply`).
 */
export const AgentReplyFrameSchema = z.object({
  id: FrameIdSchema.nullable(),
  status: z.number().int().min(100).max(599),
  body: z.unknown(),
});
/** The parsed shape of {@link AgentReplyFrameSchema}. */
export type AgentReplyFrame = z.infer<typeof AgentReplyFrameSchema>;

/**
 * Close codes of the agent link besides the standard 1000 / 1001: 1008 (policy violation) for
 * a reader so slow that its replies stayed above the coordinator's buffer bound, 1009 for a frame
 * above the size limit (`ws` sends it), 1013 (try again later) never: a sender too fast for the
 * log is slowed (the coordinator stops reading), not disconnected.
 */
export const AGENT_LINK_CLOSE_CODES = { slowReader: 1008, tooBig: 1009, goingAway: 1001 } as const;
