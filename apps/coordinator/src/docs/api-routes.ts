/**
 * The table of the coordinator's routes that the OpenAPI document and the `/docs` page are
 * generated from. Request and reply shapes are the protocol's zod schemas (the one copy);
 * this table only says which route uses which, who may call it, and what each status means.
 */
import {
  AcquireBodySchema,
  AdmitBodySchema,
  CoordinatorToGateFrameSchema,
  OkReplySchema,
  AlreadyHeldReplySchema,
  ErrorReplySchema,
  EventsQuerySchema,
  EventsReplySchema,
  ExpiredReplySchema,
  FloorReportBodySchema,
  FloorReportReplySchema,
  GrantReplySchema,
  HeldReplySchema,
  KeysReplySchema,
  LeasesReplySchema,
  LockDelayReplySchema,
  NotHolderReplySchema,
  ReadinessReplySchema,
  RejectionAcceptedReplySchema,
  RejectionBodySchema,
  RejectionsReplySchema,
  ReleaseBodySchema,
  RenewBodySchema,
  StreamFrameSchema,
  StreamQuerySchema,
} from '@lease-fence/protocol';
import type { z } from 'zod';

/** One documented reply of a route. */
export interface ApiReply {
  readonly description: string;
  /** JSON body schemas (several = one of them), or `'text'` for a plain-text body. */
  readonly schemas?: readonly z.ZodType[] | 'text' | 'html';
}

/** One route. `path` uses OpenAPI's `{param}` syntax. */
export interface ApiRoute {
  readonly method: 'get' | 'post';
  readonly path: string;
  readonly summary: string;
  /** Role required (`viewer` = any token), or `null` for no token. */
  readonly role: 'agent' | 'gate' | 'viewer' | null;
  readonly body?: z.ZodType;
  readonly query?: z.ZodObject;
  readonly replies: Readonly<Record<number, ApiReply>>;
}

/** Schemas given names in `components.schemas`, so replies and bodies reference them. */
export const NAMED_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  AcquireBody: AcquireBodySchema,
  RenewBody: RenewBodySchema,
  ReleaseBody: ReleaseBodySchema,
  RejectionBody: RejectionBodySchema,
  AdmitBody: AdmitBodySchema,
  GrantReply: GrantReplySchema,
  HeldReply: HeldReplySchema,
  AlreadyHeldReply: AlreadyHeldReplySchema,
  LockDelayReply: LockDelayReplySchema,
  ExpiredReply: ExpiredReplySchema,
  NotHolderReply: NotHolderReplySchema,
  RejectionAcceptedReply: RejectionAcceptedReplySchema,
  FloorReportReply: FloorReportReplySchema,
  OkReply: OkReplySchema,
  LeasesReply: LeasesReplySchema,
  EventsReply: EventsReplySchema,
  RejectionsReply: RejectionsReplySchema,
  ReadinessReply: ReadinessReplySchema,
  KeysReply: KeysReplySchema,
  StreamFrame: StreamFrameSchema,
  CoordinatorToGateFrame: CoordinatorToGateFrameSchema,
  ErrorReply: ErrorReplySchema,
};

const error = (description: string): ApiReply => ({ description, schemas: [ErrorReplySchema] });
const BAD_INPUT = error('Bad input: `issues` names each field (unknown fields, wrong types, ids over 200 characters, ttl out of bounds, malformed JSON). Nothing changed.');
const UNAUTHENTICATED = error('Missing or unknown bearer token.');
const FORBIDDEN = error('The token\'s role may not do this (or, for a gate, this resource is not one of its patterns).');
const TOO_LARGE = error('The body is larger than the configured limit.');
const UNAVAILABLE = error('The coordinator cannot serve: `reason` is `recovering`, `superseded`, `unhealthy`, `closed` or `event-log-unavailable`; `retryable: true`.');

const leaseWrite = { 400: BAD_INPUT, 401: UNAUTHENTICATED, 403: FORBIDDEN, 413: TOO_LARGE, 503: UNAVAILABLE };
const read = { 401: UNAUTHENTICATED, 503: UNAVAILABLE };

/** Every route the coordinator serves (the dashboard's static files aside). */
export const API_ROUTES: readonly ApiRoute[] = [
  {
    method: 'post', path: '/v1/leases/{resource}/acquire', role: 'agent', body: AcquireBodySchema,
    summary: 'Acquire a lease for the authenticated agent. A retry with the same requestId gets the same grant while that lease is current.',
    replies: {
      200: { description: 'Granted: a new fence, strictly above every fence issued before (or the existing grant for a retried requestId, with the same `signedToken`).', schemas: [GrantReplySchema] },
      409: {
        description: 'Held by another holder (`held`), already held by the caller (`already-held`, never a second fence), or in its lock-delay after its holder was lost uncleanly (`lock-delay`, see `LEASE_FENCE_LOCK_DELAY`). `retryAfterMillis` says when to try again.',
        schemas: [HeldReplySchema, AlreadyHeldReplySchema, LockDelayReplySchema],
      },
      410: { description: 'The requestId was granted before and that lease has ended: never a fresh grant for it.', schemas: [ExpiredReplySchema] },
      ...leaseWrite,
      503: error('The coordinator cannot serve (`reason` as for every route), or, on a resource of `LEASE_FENCE_FENCE_FIRST`, `fence-unavailable`: no gate admitted the new `fence` in time; it is burned and a retry (even with the same requestId) gets a higher one. `retryable: true`.'),
    },
  },
  {
    method: 'post', path: '/v1/leases/{resource}/renew', role: 'agent', body: RenewBodySchema,
    summary: 'Extend the caller\'s lease; the fence is unchanged.',
    replies: {
      200: { description: 'Renewed (same fence, same `signedToken`).', schemas: [GrantReplySchema] },
      409: { description: 'The caller does not hold that fence.', schemas: [NotHolderReplySchema] },
      410: { description: 'That generation has ended (expired, released, superseded): never resurrected.', schemas: [ExpiredReplySchema] },
      ...leaseWrite,
    },
  },
  {
    method: 'post', path: '/v1/leases/{resource}/release', role: 'agent', body: ReleaseBodySchema,
    summary: 'Give the caller\'s lease back before its expiry.',
    replies: {
      200: { description: 'Released.', schemas: [OkReplySchema] },
      409: { description: 'The caller does not hold that fence.', schemas: [NotHolderReplySchema] },
      410: { description: 'That generation has ended (expired, released, superseded); releasing it again changes nothing.', schemas: [ExpiredReplySchema] },
      ...leaseWrite,
    },
  },
  {
    method: 'post', path: '/v1/resources/{resource}/rejections', role: 'gate', body: RejectionBodySchema,
    summary: 'Record a FenceGate rejection (a refused stale write) as `FenceRejected`. Idempotent by (gate, resource, seq). '
      + 'Seqs of a gate and resource start at 1 and are contiguous: a seq above the next expected one is recorded with a `RejectionsMissing` event first (refusals that were lost).',
    replies: {
      202: { description: 'Recorded (or already recorded with the same content: `duplicate: true`).', schemas: [RejectionAcceptedReplySchema] },
      409: { description: '`seq-conflict`: this (gate, resource, seq) was recorded with other content; nothing was appended.' },
      ...leaseWrite,
    },
  },
  {
    method: 'post', path: '/v1/resources/{resource}/admit', role: 'gate', body: AdmitBodySchema,
    summary: 'Record that a gate raised its floor to a fence without a write, as `FenceAdmitted`.',
    replies: { 202: { description: 'Recorded.', schemas: [OkReplySchema] }, ...leaseWrite },
  },
  {
    method: 'post', path: '/v1/resources/{resource}/floor', role: 'gate', body: FloorReportBodySchema,
    summary: 'Report the gate\'s current floor. Above every fence the log issued for the resource (the log was lost), it raises the fence counter above it '
      + '(`FenceFloorReported`), so no earlier fence is issued again; otherwise nothing is appended. Idempotent.',
    replies: { 202: { description: 'Known, or raised (durable).', schemas: [FloorReportReplySchema] }, ...leaseWrite },
  },
  {
    method: 'get', path: '/v1/gates/link', role: 'gate',
    summary: 'WebSocket (upgrade) for fence-first handover: the gate sends `guard` (its resources, within its token\'s patterns) and answers each `admit` with `admitted` once its raised floor is durable. '
      + 'Frames are the protocol\'s gate-link schemas; a frame the coordinator cannot accept gets an `error` frame naming the field and changes nothing. The token may be the `token` query parameter or the Authorization header.',
    replies: { 101: { description: 'Switching protocols; frames are JSON text messages.', schemas: [CoordinatorToGateFrameSchema] }, 401: UNAUTHENTICATED, 403: FORBIDDEN },
  },
  {
    method: 'get', path: '/v1/leases', role: 'viewer', summary: 'Current holders, including leases carried across a restart (in their grace period).',
    replies: { 200: { description: 'Current holders.', schemas: [LeasesReplySchema] }, ...read },
  },
  {
    method: 'get', path: '/v1/events', role: 'viewer', query: EventsQuerySchema,
    summary: 'History from the log: events after position `after`, at most `limit`, and the head position.',
    replies: { 200: { description: 'Events in log order.', schemas: [EventsReplySchema] }, 400: BAD_INPUT, ...read },
  },
  {
    method: 'get', path: '/v1/rejections', role: 'viewer', summary: 'Recorded fence rejections, oldest first (the most recent ones).',
    replies: { 200: { description: 'Rejections.', schemas: [RejectionsReplySchema] }, ...read },
  },
  {
    method: 'get', path: '/v1/stream', role: 'viewer', query: StreamQuerySchema,
    summary: 'WebSocket (upgrade): every log event after `after`, then `caught-up`, then live events, heartbeats and `stats` about once a second. '
      + 'A slow consumer is sent `closing` and disconnected; resume with `after` = the last position received. The token may be the `token` query parameter or the Authorization header.',
    replies: { 101: { description: 'Switching protocols; frames are JSON text messages.', schemas: [StreamFrameSchema] }, 400: BAD_INPUT, 401: UNAUTHENTICATED },
  },
  {
    method: 'get', path: '/v1/keys', role: null,
    summary: 'The public keys signed grants (`grant.signedToken`, a compact JWS with alg EdDSA) verify with, as a JWKS: the key signing now first, then older keys still published. No token needed.',
    replies: { 200: { description: 'JWKS of Ed25519 public keys.', schemas: [KeysReplySchema] } },
  },
  { method: 'get', path: '/healthz', role: null, summary: 'The process is up.', replies: { 200: { description: 'Up.' } } },
  {
    method: 'get', path: '/readyz', role: null, summary: 'Ready once recovery has finished; 503 with the reason while recovering or when superseded/unhealthy.',
    replies: { 200: { description: 'Ready.', schemas: [ReadinessReplySchema] }, 503: { description: 'Not ready.', schemas: [ReadinessReplySchema] } },
  },
  {
    method: 'get', path: '/metrics', role: 'viewer', summary: 'Prometheus text: grants, renewals, denials by reason, rejections, append latency, group-commit batch sizes, recovery duration.',
    replies: { 200: { description: 'Prometheus exposition format.', schemas: 'text' }, 401: UNAUTHENTICATED },
  },
  { method: 'get', path: '/docs', role: null, summary: 'This API as a small HTML page.', replies: { 200: { description: 'HTML.', schemas: 'html' } } },
  { method: 'get', path: '/docs/openapi.json', role: null, summary: 'This API as an OpenAPI 3.1 document.', replies: { 200: { description: 'OpenAPI document.' } } },
];
