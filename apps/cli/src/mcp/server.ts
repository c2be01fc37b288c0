/**
 * The lease-fence MCP server: leases with fencing tokens as tools an AI agent calls. One
 * {@link McpServer} per MCP session (stdio: the process; Streamable HTTP: each session id), each
 * with its own {@link LeaseSession}, so a session's leases are renewed while it lives and
 * released when it ends.
 *
 * Tools: `acquire_lease`, `renew_lease`, `release_lease`, `who_holds`, `list_rejections`,
 * `explain_rejection`, `fenced_request`. Resources: `lease-fence://leases` (this session's leases
 * and the coordinator's holders) and `lease-fence://rejections` (recent refusals).
 * A lost lease is told in the next tool result and, at once, as a `notifications/message`
 * (logging, level `warning`, logger `lease-fence`).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { MAX_TIMER_MILLIS, type AcquireDenial, type LeaseFenceClient, type LeaseLostError } from '@lease-fence/client';
import {
  formatDuration,
  formatWallDateTime,
  investigate,
  whoHeld,
  type Generation,
  openGeneration,
} from '@lease-fence/dashboard-model';
import { IdSchema, TtlMillisSchema } from '@lease-fence/protocol';
import { z } from 'zod';
import { generationOf, type CoordinatorReads } from './coordinator-reads.js';
import { inTheFuture, pastTheLogEnd } from '../log-reader.js';
import { checkGate, LEASE_FENCE_TOKEN_HEADER, sendFencedRequest, type FencedAnswer } from './fenced-request.js';
import { LeaseSession } from './lease-session.js';

/** The tool names, exactly as an MCP client lists them. */
export const TOOL_NAMES = [
  'acquire_lease',
  'renew_lease',
  'release_lease',
  'who_holds',
  'list_rejections',
  'explain_rejection',
  'fenced_request',
] as const;

/** URIs of the resources the server exposes. */
export const RESOURCE_URIS = { leases: 'lease-fence://leases', rejections: 'lease-fence://rejections' } as const;

/** Options of {@link createLeaseFenceMcpServer}. */
export interface LeaseFenceMcpServerOptions {
  /** The agent's SDK client: every lease of the session is its token's holder's. */
  readonly client: LeaseFenceClient;
  /** The coordinator's read routes (holders, refusals, the log). */
  readonly reads: CoordinatorReads;
  /** The server's version, as `initialize` reports it. */
  readonly version: string;
  /**
   * Plain words for a failure of a tool's request to the coordinator (unreachable, unavailable,
   * token refused, bad input it refused), shown to the agent as an error result.
   * @defaultValue the error's message
   */
  readonly describeFailure?: (error: unknown) => string;
}

/** One session's server and its leases. */
export interface LeaseFenceMcpSession {
  readonly server: McpServer;
  readonly session: LeaseSession;
  /** Releases every lease of the session, then closes the server. Idempotent; never throws. */
  close(): Promise<void>;
}

/** What the SDK hands a tool call besides its arguments (its signal, `_meta`, related notifications). */
type ToolCallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The longest `waitMillis` an acquire accepts (10 minutes). */
export const MAX_WAIT_MILLIS = 600_000;
/** The default and the longest `timeoutMillis` of `fenced_request` (30 s and 10 minutes). */
export const FENCED_REQUEST_TIMEOUT_MILLIS = { default: 30_000, max: 600_000 } as const;
/** How many refusals `list_rejections` shows by default, and at most. */
const REJECTIONS_SHOWN = { default: 20, max: 1000 } as const;

const resourceField = IdSchema.describe(
  'The resource the lease is for, e.g. "deploy-slot" (1-200 printable ASCII characters, the name the gate guards).',
);
/**
 * `ttlMillis` of `acquire_lease` and `renew_lease`: the wire's own rule (libs/protocol; the
 * coordinator checks the range against its configured bounds and names them), plus what the SDK
 * can ask for at all (at most the longest timer, longer than its clock skew), so a TTL the SDK
 * would refuse is refused here naming the tool's field rather than with the SDK's own words.
 */
const ttlMillisField = (clockSkewMillis: number) =>
  TtlMillisSchema.max(
    MAX_TIMER_MILLIS,
    `must be at most ${MAX_TIMER_MILLIS} milliseconds (about ${Math.floor(MAX_TIMER_MILLIS / 86_400_000)} days, the longest timer)`,
  )
    .refine((ttlMillis) => ttlMillis > clockSkewMillis, {
      message: `must be longer than the clock skew (${clockSkewMillis} ms) this server allows for`,
    })
    .optional()
    .describe(
      'Lease duration in milliseconds (e.g. 30000 for 30 s); absent = the coordinator default. The server renews it in the background, so pick how long a stall you tolerate, not how long your work takes.',
    );

/**
 * Why `name: value` cannot be sent as an HTTP header (fetch's own rule: a token name, a value
 * without CR, LF or NUL), or `undefined` when it can.
 */
const headerProblem = (name: string, value: string): string | undefined => {
  try {
    new Headers([[name, '']]);
  } catch {
    return "is not a valid HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only)";
  }
  try {
    new Headers([[name, value]]);
  } catch {
    return 'is not a valid HTTP header value (no line breaks or NUL characters)';
  }
  return undefined;
};

/**
 * Builds the MCP server of one session.
 *
 * @returns The server (connect it to a transport) and its session; `close` ends both.
 */
export function createLeaseFenceMcpServer(options: LeaseFenceMcpServerOptions): LeaseFenceMcpSession {
  const server = new McpServer(
    { name: 'lease-fence', version: options.version },
    {
      capabilities: { logging: {} },
      instructions:
        'Leases with fencing tokens. Before changing a shared resource (a deploy slot, a database, a branch), call acquire_lease; write to it only with fenced_request, which sends your lease\'s signed token through the resource\'s lease-fence-gate, so a write made after your lease was lost is refused instead of landing. Release with release_lease when done. If a result starts with "LEASE LOST", stop writing to that resource and acquire it again.',
    },
  );
  const session = new LeaseSession(options.client, {
    onLost: (error) => {
      void server
        .sendLoggingMessage({ level: 'warning', logger: 'lease-fence', data: lostText(error) })
        .catch(() => undefined);
    },
  });
  const { reads } = options;
  const { clockSkewMillis } = options.client;
  const ttlMillis = ttlMillisField(clockSkewMillis);
  const describeFailure =
    options.describeFailure ?? ((error: unknown) => (error instanceof Error ? error.message : String(error)));

  /** Every tool answer goes through here, so untold losses come first. */
  const answer = (text: string, structured: Record<string, unknown>, isError = false): CallToolResult => {
    const losses = session.takeUntoldLosses();
    const lossText = losses.map(lostText);
    return {
      content: [{ type: 'text', text: [...lossText, text].join('\n\n') }],
      structuredContent: {
        ...structured,
        ...(losses.length === 0
          ? {}
          : { lostLeases: losses.map((l) => ({ resource: l.resource, fence: l.fence, reason: l.reason })) }),
      },
      ...(isError ? { isError: true } : {}),
    };
  };
  /**
   * Runs a tool body under the call's signal (aborted when the client cancels the call or the
   * session ends); a coordinator that cannot answer becomes a plain-words error result.
   */
  const guarded =
    <A>(body: (args: A, signal: AbortSignal, extra: ToolCallExtra) => Promise<CallToolResult>) =>
    async (args: A, extra: ToolCallExtra): Promise<CallToolResult> => {
      try {
        return await body(args, session.callSignal(extra.signal), extra);
      } catch (error) {
        return answer(failureText(error, describeFailure), { ok: false, error: errorName(error) }, true);
      }
    };

  server.registerTool(
    'acquire_lease',
    {
      title: 'Acquire a fenced lease',
      description:
        'Take the lease on a resource before changing it. On success you get a fence number; the lease is renewed in the background until you call release_lease or this session ends. Write to the resource only with fenced_request. If another holder has it, the answer says who and when to try again; pass waitMillis to wait for it instead.',
      inputSchema: z.strictObject({
        resource: resourceField,
        ttlMillis,
        waitMillis: z
          .number()
          .int('must be a whole number of milliseconds')
          .min(0, 'must be 0 or more milliseconds')
          .max(MAX_WAIT_MILLIS, `must be at most ${MAX_WAIT_MILLIS} milliseconds (10 minutes)`)
          .default(0)
          .describe(
            'How long to keep trying while another holder has the resource, in milliseconds (0 = one try). At most 600000. Many MCP clients give up on a call after 60 s unless progress restarts their timeout (progress is sent at every attempt when the call asks for it); to wait longer without that, call again.',
          ),
      }),
      annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    guarded(async ({ resource, ttlMillis, waitMillis }, signal, extra) => {
      // While it waits, a client that asked for progress is told so at every attempt: a client
      // whose request timeout restarts on progress (the SDK's resetTimeoutOnProgress) then waits
      // as long as waitMillis rather than giving up after its own timeout (60 s by default).
      const progressToken = extra._meta?.progressToken;
      const onWaiting =
        progressToken === undefined
          ? undefined
          : (waitedMillis: number, denial: AcquireDenial) =>
              void extra
                .sendNotification({
                  method: 'notifications/progress',
                  params: {
                    progressToken,
                    progress: waitedMillis,
                    total: waitMillis,
                    message: `waiting for ${resource}: ${denialText(resource, denial)}`,
                  },
                })
                .catch(() => undefined);
      const result = await session.acquire(resource, ttlMillis, waitMillis, signal, onWaiting);
      if (result.ok) {
        const lease = result.lease;
        return answer(
          `acquired ${resource} with fence ${lease.fence} (ttl ${lease.ttlMillis} ms${result.waitedMillis > 0 ? `, after waiting ${formatDuration(result.waitedMillis)}` : ''}); it is renewed in the background while this session lives. Write to ${resource} with fenced_request; call release_lease when done.`,
          { ok: true, resource, holderId: lease.holderId, fence: lease.fence, ttlMillis: lease.ttlMillis },
        );
      }
      if (result.reason === 'already-held-here')
        return answer(
          `you already hold ${resource} with fence ${result.lease.fence} in this session; it is being renewed. Use it, or release_lease first.`,
          { ok: true, resource, holderId: result.lease.holderId, fence: result.lease.fence, alreadyHeld: true },
        );
      return answer(`not acquired: ${denialText(resource, result)}`, { resource, ...result });
    }),
  );

  server.registerTool(
    'renew_lease',
    {
      title: 'Renew a lease now',
      description:
        'Extend your lease on a resource now. Rarely needed: the server already renews every lease of this session in the background. Use it to check that the lease is still yours before a long step; if it says the lease is lost, stop writing and call acquire_lease again.',
      inputSchema: z.strictObject({ resource: resourceField, ttlMillis }),
      annotations: { idempotentHint: true, openWorldHint: true },
    },
    guarded(async ({ resource, ttlMillis }, signal) => {
      const result = await session.renew(resource, ttlMillis, signal);
      if (result === undefined)
        return answer(
          `you hold no lease on ${resource} in this session: call acquire_lease first.`,
          { ok: false, resource, reason: 'no-lease' },
          true,
        );
      if (result.ok) {
        const remainingMillis = wholeMillis(result.lease.remainingMillis());
        return answer(
          `renewed ${resource}: fence ${result.lease.fence}, good for ${formatDuration(remainingMillis)} more by this server's clock (and renewed in the background).`,
          { ok: true, resource, fence: result.lease.fence, remainingMillis },
        );
      }
      if (result.reason === 'dead-on-arrival')
        return answer(
          `not renewed by this call: its answer came after the deadline it would have set (a slow network). Your lease on ${resource} is still renewed in the background; a loss would be told as LEASE LOST.`,
          { ok: false, resource, reason: result.reason },
          true,
        );
      return answer(
        `not renewed: your lease on ${resource} is lost (${result.lost === undefined ? result.reason : lostReasonText(result.lost.reason)}). Stop writing to ${resource}; call acquire_lease to take it again.`,
        { ok: false, resource, reason: result.lost?.reason ?? result.reason },
        true,
      );
    }),
  );

  server.registerTool(
    'release_lease',
    {
      title: 'Release a lease',
      description:
        'Give your lease on a resource back as soon as you are done with it, so others need not wait for it to expire. Renewal stops; later fenced_request calls for it are refused.',
      inputSchema: z.strictObject({ resource: resourceField }),
      annotations: { idempotentHint: true, openWorldHint: true },
    },
    guarded(async ({ resource }) => {
      const released = await session.release(resource);
      if (released === undefined)
        return answer(`you hold no lease on ${resource} in this session: nothing to release.`, {
          ok: true,
          resource,
          released: false,
        });
      if (released.result.ok)
        return answer(`released ${resource} (fence ${released.fence}).`, {
          ok: true,
          resource,
          fence: released.fence,
          released: true,
        });
      return answer(
        `${resource} (fence ${released.fence}) was no longer yours to release (${released.result.reason}): it had already ended.`,
        { ok: true, resource, fence: released.fence, released: false, reason: released.result.reason },
      );
    }),
  );

  server.registerTool(
    'who_holds',
    {
      title: 'Who holds a resource',
      description:
        "Say who holds a resource now, or who held it at a past time (atTime, ISO 8601) or log position (atPosition), from the coordinator's log. Use it to decide whether to wait, or to find who wrote when.",
      inputSchema: z.strictObject({
        resource: resourceField,
        atTime: z.iso
          .datetime({ offset: true, message: 'must be an ISO 8601 date-time such as 2026-12-01T21:30:00Z' })
          .optional()
          .describe('A past moment, ISO 8601 with a zone, e.g. 2026-12-01T21:30:00Z (coordinator wall clock).'),
        atPosition: z
          .number()
          .int('must be a whole log position')
          .positive('must be a log position of 1 or more')
          .optional()
          .describe('A log position (as list_rejections shows): who held it once that event was recorded.'),
      }),
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    guarded(async ({ resource, atTime, atPosition }, signal) => {
      if (atTime !== undefined && atPosition !== undefined)
        return answer(
          'atTime and atPosition: give one of them, not both.',
          { ok: false, error: 'invalid-arguments' },
          true,
        );
      if (atTime === undefined && atPosition === undefined) {
        const lease = (await reads.leases(signal)).find((l) => l.resource === resource);
        return lease === undefined
          ? answer(`${resource} is free: nobody holds it now.`, { ok: true, resource, held: false })
          : answer(
              `${resource} is held by ${lease.holderId} with fence ${lease.fence} (ttl ${lease.ttlMillis} ms${lease.inGrace ? ', carried across a coordinator restart, in grace' : ''})${lease.holderId === session.holderId ? ': that is you' : ''}.`,
              {
                ok: true,
                resource,
                held: true,
                holderId: lease.holderId,
                fence: lease.fence,
                ttlMillis: lease.ttlMillis,
              },
            );
      }
      const future =
        atTime === undefined ? undefined : inTheFuture(atTime, Date.parse(atTime), Date.now(), clockSkewMillis);
      if (future !== undefined)
        return answer(
          `atTime: ${future}. Call who_holds without atTime for who holds it now.`,
          { ok: false, error: 'invalid-arguments' },
          true,
        );
      const history = await reads.history();
      if (atTime !== undefined) {
        const wallMillis = Date.parse(atTime);
        const held = whoHeld(history.head, resource, wallMillis);
        const at = formatWallDateTime(wallMillis);
        if (held.held)
          return answer(`at ${at}, ${resource} was held by ${generationText(held.generation)}.`, {
            ok: true,
            resource,
            held: true,
            holderId: held.generation.holderId,
            fence: held.generation.fence,
          });
        return answer(
          held.reason === 'unknown-resource'
            ? `the coordinator's log has no event about ${resource}.`
            : `at ${at}, nobody held ${resource}${held.previous === undefined ? '' : `; before that, ${generationText(held.previous)}`}.`,
          { ok: true, resource, held: false, reason: held.reason },
        );
      }
      const position = atPosition as number;
      if (position > history.position)
        return answer(
          `atPosition: ${pastTheLogEnd(position, history.position)}.`,
          { ok: false, error: 'invalid-arguments' },
          true,
        );
      const lane = history.stateAt(position).lanes.get(resource);
      const generation = lane === undefined ? undefined : openGeneration(lane);
      return generation === undefined
        ? answer(`at log position ${position}, nobody held ${resource}.`, { ok: true, resource, held: false })
        : answer(`at log position ${position}, ${resource} was held by ${generationText(generation)}.`, {
            ok: true,
            resource,
            held: true,
            holderId: generation.holderId,
            fence: generation.fence,
          });
    }),
  );

  server.registerTool(
    'list_rejections',
    {
      title: 'List refused writes',
      description:
        "List the writes gates refused because their fence was stale (or the same fence came from two holders), newest last, with each one's log position. Pass a position to explain_rejection for the full story.",
      inputSchema: z.strictObject({
        resource: IdSchema.optional().describe('Only refusals of this resource.'),
        limit: z
          .number()
          .int('must be a whole number')
          .min(1, 'must be at least 1')
          .max(REJECTIONS_SHOWN.max, `must be at most ${REJECTIONS_SHOWN.max}`)
          .default(REJECTIONS_SHOWN.default)
          .describe('How many of the most recent refusals to show (1-1000, default 20).'),
      }),
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    guarded(async ({ resource, limit }, signal) => {
      const all = await reads.rejections(signal);
      const shown = all.filter((r) => resource === undefined || r.resource === resource).slice(-limit);
      const lines = shown.map(
        (r) =>
          `position ${r.position}: ${r.resource}: ${r.rejected.holderId}'s fence ${r.rejected.fence} refused by gate ${r.gateId} at ${formatWallDateTime(r.wallMillis)} (${r.kind === 'stale' ? `stale: floor ${r.current.fence} of ${r.current.holderId}` : `double grant: ${r.current.holderId} also has fence ${r.current.fence}`})`,
      );
      return answer(
        shown.length === 0
          ? `no refused writes${resource === undefined ? '' : ` for ${resource}`} in the coordinator's log.`
          : lines.join('\n'),
        { ok: true, rejections: shown },
      );
    }),
  );

  server.registerTool(
    'explain_rejection',
    {
      title: 'Explain a refused write',
      description:
        "Explain, in one sentence, why a gate refused a write: whose fence, which newer holder set the floor, and when. Give the log position list_rejections shows (a fenced_request refusal gives the gate's seq, which is not a log position).",
      inputSchema: z.strictObject({
        position: z
          .number()
          .int('must be a whole log position')
          .positive('must be a log position of 1 or more')
          .describe('The log position of the refusal (a FenceRejected event), as list_rejections shows.'),
      }),
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    guarded(async ({ position }) => {
      const result = investigate(await reads.history(), position, 0);
      if (result.ok)
        return answer(result.investigation.explanation, {
          ok: true,
          position,
          explanation: result.investigation.explanation,
        });
      return answer(
        result.reason === 'not-in-log'
          ? `position ${position} is not in the coordinator's log (it holds positions ${result.firstPosition} to ${result.lastPosition}).`
          : `position ${position} is a ${result.type} event, not a refused write: list_rejections shows the refusals' positions.`,
        { ok: false, position, reason: result.reason },
        true,
      );
    }),
  );

  server.registerTool(
    'fenced_request',
    {
      title: 'Write through a fencing gate',
      description: `Send an HTTP request to a resource's lease-fence-gate sidecar with your lease's signed token in the ${LEASE_FENCE_TOKEN_HEADER} header. Returns the service's answer (status and body), or, when your lease is no longer current, "refused: …" in plain words: the write did not reach the service; stop, and acquire the lease again before retrying. You must hold the lease on the resource (acquire_lease). Only requests through the gate are fenced.`,
      inputSchema: z
        .strictObject({
          resource: resourceField.describe('The resource whose lease you hold (the one the gate guards).'),
          method: z
            .enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
            .describe('HTTP method, upper case.'),
          url: z
            .url({
              protocol: /^https?$/,
              message: 'must be an absolute http(s) URL of the gate, e.g. http://127.0.0.1:3100/deployments',
            })
            .describe('Absolute URL on the gate sidecar, path included, e.g. http://127.0.0.1:3100/deployments.'),
          body: z.string().optional().describe('Request body as text (JSON is sent as application/json).'),
          headers: z
            .record(z.string(), z.string())
            .superRefine((headers, context) => {
              for (const [name, value] of Object.entries(headers)) {
                const problem = headerProblem(name, value);
                if (problem !== undefined) context.addIssue({ code: 'custom', path: [name], message: problem });
              }
            })
            .optional()
            .describe(
              `Extra request headers. Do not set ${LEASE_FENCE_TOKEN_HEADER}: the server sets it from your lease.`,
            ),
          timeoutMillis: z
            .number()
            .int('must be a whole number of milliseconds')
            .min(1, 'must be at least 1 millisecond')
            .max(FENCED_REQUEST_TIMEOUT_MILLIS.max, `must be at most ${FENCED_REQUEST_TIMEOUT_MILLIS.max} milliseconds`)
            .default(FENCED_REQUEST_TIMEOUT_MILLIS.default)
            .describe(
              `Give up after this many milliseconds without an answer (default ${FENCED_REQUEST_TIMEOUT_MILLIS.default}). ` +
                'Many MCP clients give up on a call after 60 s of their own; above that, raise the client’s request timeout too.',
            ),
        })
        .superRefine(({ method, body }, context) => {
          // fetch's rule: a GET or HEAD request has no body.
          if (body !== undefined && (method === 'GET' || method === 'HEAD'))
            context.addIssue({ code: 'custom', path: ['body'], message: `must be absent with method ${method}` });
        }),
      annotations: { destructiveHint: true, openWorldHint: true },
    },
    guarded(async ({ resource, method, url, body, headers = {}, timeoutMillis }, callSignal) => {
      const tokenHeader = Object.keys(headers).find(
        (name) => name.toLowerCase() === LEASE_FENCE_TOKEN_HEADER.toLowerCase(),
      );
      if (tokenHeader !== undefined)
        return answer(
          `headers.${tokenHeader}: must not be given; the server sends your lease's token itself.`,
          { ok: false, error: 'invalid-arguments' },
          true,
        );
      const current = session.current(resource);
      if (current.state === 'none')
        return answer(
          `not sent: you hold no lease on ${resource} in this session. Call acquire_lease first.`,
          { ok: false, resource, reason: 'no-lease', sent: false },
          true,
        );
      if (current.state === 'lost')
        return answer(
          `not sent: your lease on ${resource} (fence ${current.lease.fence}) was lost${current.lost === undefined ? '' : ` (${lostReasonText(current.lost.reason)})`}, so a write with it could land after another holder's. Call acquire_lease to take ${resource} again.`,
          { ok: false, resource, reason: 'lease-lost', sent: false, fence: current.lease.fence },
          true,
        );
      const signal = AbortSignal.any([callSignal, AbortSignal.timeout(timeoutMillis)]);
      const notAGate = await checkGate(url, resource, signal);
      if (notAGate !== undefined)
        return answer(
          `not sent: ${notAGate.detail}. fenced_request sends your lease's token only to the lease-fence-gate that guards ${resource}, so the write is fenced and the token goes nowhere else; pass a URL on that gate.`,
          { ok: false, resource, reason: notAGate.reason, sent: false },
          true,
        );
      const reply = await sendFencedRequest({
        method,
        url,
        body,
        headers,
        signedToken: current.lease.signedToken,
        signal,
      });
      return answerFenced(resource, reply);
    }),
  );

  const answerFenced = async (resource: string, reply: FencedAnswer): Promise<CallToolResult> => {
    if (reply.kind === 'upstream') {
      const redirected =
        reply.location === undefined
          ? ''
          : `\nredirected to ${reply.location}: not followed (fenced_request sends your lease's token and your write only to the gate); if that URL is on the gate, send the request there.`;
      return answer(
        `${reply.status}${reply.contentType === undefined ? '' : ` (${reply.contentType})`}:\n${reply.body}${reply.truncated ? '\n[body cut]' : ''}${redirected}`,
        {
          ok: reply.status < 300,
          status: reply.status,
          contentType: reply.contentType,
          body: reply.body,
          ...(reply.location === undefined ? {} : { location: reply.location }),
        },
        reply.status >= 400,
      );
    }
    if (reply.kind === 'gate-refused')
      return answer(
        `not admitted by the gate (${reply.status} ${reply.reason}): ${reply.message}. The write did not reach the service.`,
        { ok: false, status: reply.status, reason: reply.reason },
        true,
      );
    let since = '';
    try {
      const generation = generationOf(await reads.history(), resource, reply.current.fence);
      if (generation !== undefined) since = ` since ${formatWallDateTime(generation.startWallMillis)}`;
    } catch {
      // the refusal stands on its own; the time is a courtesy
    }
    const text =
      reply.reason === 'stale-fence'
        ? `refused: your fence ${reply.rejected.fence} is older than the resource's floor ${reply.current.fence} held by ${reply.current.holderId}${since}. The write did not reach the service; the gate recorded the refusal (its seq ${reply.seq}, not a log position: list_rejections shows it with its position once the gate has reported it). Your lease on ${resource} is no longer current: acquire it again before writing.`
        : `refused: fence ${reply.rejected.fence} of ${resource} also belongs to ${reply.current.holderId}${since}, which is evidence of a double grant. The write did not reach the service; the gate recorded the refusal (its seq ${reply.seq}, not a log position: list_rejections shows it with its position once the gate has reported it).`;
    return answer(
      text,
      {
        ok: false,
        status: reply.status,
        reason: reply.reason,
        resource,
        seq: reply.seq,
        rejected: reply.rejected,
        current: reply.current,
      },
      true,
    );
  };

  server.registerResource(
    'leases',
    RESOURCE_URIS.leases,
    {
      title: 'Leases',
      description: "This session's leases (held or lost) and every current holder the coordinator knows, as JSON.",
      mimeType: 'application/json',
    },
    async (uri) => {
      const mine = [...session.leases.values()].map((held) => ({
        resource: held.resource,
        fence: held.keeper.lease.fence,
        state: held.keeper.state,
        ...(held.keeper.state === 'held' ? { remainingMillis: wholeMillis(held.keeper.view.remainingMillis()) } : {}),
        ...(held.keeper.lost === undefined ? {} : { lostReason: held.keeper.lost.reason }),
      }));
      const holders = await reads.leases(session.signal);
      return {
        contents: [
          {
            uri: uri.href,
            mimeType: 'application/json',
            text: JSON.stringify({ holderId: session.holderId, session: mine, coordinator: holders }, null, 2),
          },
        ],
      };
    },
  );

  server.registerResource(
    'rejections',
    RESOURCE_URIS.rejections,
    {
      title: 'Refused writes',
      description: 'The most recent refusals recorded by the coordinator (at most 1000), oldest first, as JSON.',
      mimeType: 'application/json',
    },
    async (uri) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'application/json',
          text: JSON.stringify({ rejections: await reads.rejections(session.signal) }, null, 2),
        },
      ],
    }),
  );

  let closing: Promise<void> | undefined;
  return {
    server,
    session,
    close: () => {
      closing ??= (async () => {
        await session.close();
        await server.close().catch(() => undefined);
      })();
      return closing;
    },
  };
}

/** The plain-words notice of a lost lease: first in the next tool result, and the notification's text. */
export function lostText(error: LeaseLostError): string {
  return `LEASE LOST: your lease on ${error.resource} (fence ${error.fence}) can no longer be trusted: ${lostReasonText(error.reason)}. Stop writing to ${error.resource}; fenced_request will not send with it. Call acquire_lease if you still need it.`;
}

const lostReasonText = (reason: LeaseLostError['reason']): string => {
  switch (reason) {
    case 'expired':
      return 'the coordinator says it expired';
    case 'not-holder':
      return 'the coordinator says that fence is no longer yours';
    case 'deadline-passed':
      return 'no renewal reached the coordinator before its deadline';
    case 'dead-on-arrival':
      return 'its renewal arrived after the deadline it would have set';
    case 'released':
      return 'it was released';
  }
};

const denialText = (
  resource: string,
  denial: {
    readonly reason: string;
    readonly heldBy?: string;
    readonly retryAfterMillis?: number;
    readonly fence?: number;
  },
): string => {
  const retry =
    denial.retryAfterMillis === undefined
      ? ''
      : ` Try again in ${formatDuration(denial.retryAfterMillis)}, or call acquire_lease with waitMillis to wait for it.`;
  switch (denial.reason) {
    case 'held':
      return `${resource} is held by ${denial.heldBy ?? 'another holder'}.${retry}`;
    case 'already-held':
      return `your agent already holds ${resource} with fence ${denial.fence ?? '?'} from another session or an earlier call; it is released when that session ends or expires after its TTL.${retry}`;
    case 'lock-delay':
      return `${resource}'s previous holder was lost uncleanly, so nobody gets it until its lock-delay has passed.${retry}`;
    case 'dead-on-arrival':
      return `the grant arrived after its deadline had passed (a slow network), so it was released. Try again.`;
    default:
      return `the coordinator answered ${denial.reason}. Try again.`;
  }
};

const generationText = (generation: Generation): string =>
  `${generation.holderId} with fence ${generation.fence} (from ${formatWallDateTime(generation.startWallMillis)}${generation.end === undefined ? '' : ` to ${formatWallDateTime(generation.endWallMillis)}, ${generation.end.kind}`})`;

/** A failure's plain words: a request that got no answer in time, or what `describeFailure` says. */
const failureText = (error: unknown, describeFailure: (error: unknown) => string): string => {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `no answer in time (${error.message}); the request may or may not have been applied.`;
  return describeFailure(error);
};

/** Time left as the whole milliseconds a `…Millis` field holds, rounded down (never more than there is), at least 0. */
const wholeMillis = (millis: number): number => Math.max(0, Math.floor(millis));

const errorName = (error: unknown): string => (error instanceof Error ? error.name : 'Error');
