/**
 * HTTP request bodies and replies of the coordinator's `/v1` API, shared by the service (which
 * parses requests with them) and the SDK (which parses replies with them).
 *
 * @see DESIGN.md § "The library's rules" for the outcomes' meaning.
 */
import { z } from 'zod';
import { FenceSchema, HolderFenceSchema, IdSchema, MillisSchema, RecordedEventSchema, RecordedRejectionSchema } from './events.js';

/** `POST /v1/leases/:resource/acquire`. `ttlMillis` defaults to the coordinator's configured TTL. */
export const AcquireBodySchema = z.strictObject({
  /** The caller's id for this intent; a retry reuses it and gets the same grant. */
  requestId: IdSchema,
  /** Requested lease duration in milliseconds, within the coordinator's configured bounds. */
  ttlMillis: z.number().int('must be an integer (milliseconds)').positive('must be positive (milliseconds)').optional(),
});
export type AcquireBody = z.infer<typeof AcquireBodySchema>;

/** `POST /v1/leases/:resource/renew`. */
export const RenewBodySchema = z.strictObject({
  requestId: IdSchema,
  fence: FenceSchema,
  ttlMillis: z.number().int('must be an integer (milliseconds)').positive('must be positive (milliseconds)').optional(),
});
export type RenewBody = z.infer<typeof RenewBodySchema>;

/** `POST /v1/leases/:resource/release`. */
export const ReleaseBodySchema = z.strictObject({ fence: FenceSchema });
export type ReleaseBody = z.infer<typeof ReleaseBodySchema>;

/** An instant on the wire: milliseconds in a named clock domain. */
export const WireInstantSchema = z.object({ millis: MillisSchema, domain: z.string().min(1) });
export type WireInstant = z.infer<typeof WireInstantSchema>;

/**
 * A grant on the wire. `coordinatorExpiresAt` is in the coordinator's clock domain: a client
 * may display it, never measure against it; its own deadline is anchored at its send instant.
 */
export const WireGrantSchema = z.object({
  resource: IdSchema,
  holderId: IdSchema,
  fence: FenceSchema,
  ttlMillis: z.number().int().positive(),
  requestId: IdSchema,
  coordinatorExpiresAt: WireInstantSchema,
});
export type WireGrant = z.infer<typeof WireGrantSchema>;

/** 200 reply of acquire and renew. */
export const GrantReplySchema = z.object({ ok: z.literal(true), grant: WireGrantSchema });
export type GrantReply = z.infer<typeof GrantReplySchema>;
/** 409 reply of acquire: another holder has it. */
export const HeldReplySchema = z.object({ ok: z.literal(false), reason: z.literal('held'), heldBy: IdSchema, retryAfterMillis: MillisSchema });
/** 409 reply of acquire: the caller already holds it (never a second fence). */
export const AlreadyHeldReplySchema = z.object({ ok: z.literal(false), reason: z.literal('already-held'), heldBy: IdSchema, fence: FenceSchema, retryAfterMillis: MillisSchema });
/** 410 reply: the lease (or the grant a retried requestId was owed) has ended; never resurrected. */
export const ExpiredReplySchema = z.object({ ok: z.literal(false), reason: z.literal('expired'), fence: FenceSchema.optional() });
/** 409 reply of renew and release: the caller does not hold that fence. */
export const NotHolderReplySchema = z.object({ ok: z.literal(false), reason: z.literal('not-holder') });

export const AcquireReplySchema = z.discriminatedUnion('reason', [HeldReplySchema, AlreadyHeldReplySchema, ExpiredReplySchema]).or(GrantReplySchema);
export type AcquireReply = z.infer<typeof AcquireReplySchema>;
export const RenewReplySchema = z.union([GrantReplySchema, ExpiredReplySchema, NotHolderReplySchema]);
export type RenewReply = z.infer<typeof RenewReplySchema>;
export const ReleaseReplySchema = z.union([z.object({ ok: z.literal(true) }), NotHolderReplySchema]);
export type ReleaseReply = z.infer<typeof ReleaseReplySchema>;

/**
 * `POST /v1/resources/:resource/rejections`: a FenceGate rejection record as the library makes
 * it. Idempotent by (authenticated gate, resource, seq). 202 on success.
 */
export const RejectionBodySchema = z.strictObject({
  seq: z.number().int().nonnegative(),
  resource: IdSchema,
  kind: z.enum(['stale', 'double-grant']).default('stale'),
  rejected: HolderFenceSchema,
  current: HolderFenceSchema,
  /** The gate's wall clock at the refusal (epoch milliseconds, display only). */
  wallMillis: MillisSchema.optional(),
});
export type RejectionBody = z.infer<typeof RejectionBodySchema>;

/** `POST /v1/resources/:resource/admit`: a gate records that it raised its floor to `fence`. */
export const AdmitBodySchema = z.strictObject({ holderId: IdSchema, fence: FenceSchema });
export type AdmitBody = z.infer<typeof AdmitBodySchema>;

/** `GET /v1/events?after=&limit=`. `after` is a log position (0 = from the start). */
export const EventsQuerySchema = z.object({
  after: z.coerce.number().int().nonnegative().default(0),
  limit: z.coerce.number().int().positive().max(10_000).default(1000),
});

/** One current holder in `GET /v1/leases`. Instants are in the coordinator's current boot domain. */
export const WireLeaseSchema = z.object({
  resource: IdSchema,
  holderId: IdSchema,
  fence: FenceSchema,
  ttlMillis: z.number().int().positive(),
  requestId: IdSchema,
  coordinatorExpiresAt: WireInstantSchema,
  /** True when this lease was carried across a restart and is inside its grace period. */
  inGrace: z.boolean(),
});
export type WireLease = z.infer<typeof WireLeaseSchema>;

/** 4xx error body for bad input: every issue names the field (`path`, dotted). */
export const ErrorReplySchema = z.object({
  error: z.string(),
  message: z.string(),
  issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  retryable: z.boolean().optional(),
  /** On 503: why the coordinator cannot serve (`recovering`, `superseded`, `unhealthy`, `closed`, `event-log-unavailable`). */
  reason: z.string().optional(),
});
export type ErrorReply = z.infer<typeof ErrorReplySchema>;

/** 202 reply of `POST /v1/resources/:resource/rejections`; `duplicate` = that (gate, resource, seq) was already recorded. */
export const RejectionAcceptedReplySchema = z.object({ ok: z.literal(true), duplicate: z.boolean() });
export type RejectionAcceptedReply = z.infer<typeof RejectionAcceptedReplySchema>;

/** `{ ok: true }`: 200 reply of release, 202 reply of `POST /v1/resources/:resource/admit` (the `FenceAdmitted` event is durable). */
export const OkReplySchema = z.object({ ok: z.literal(true) });
export type OkReply = z.infer<typeof OkReplySchema>;

/** 200 reply of `GET /v1/leases`: the current holders (including leases carried across a restart, in grace). */
export const LeasesReplySchema = z.object({ leases: z.array(WireLeaseSchema) });
export type LeasesReply = z.infer<typeof LeasesReplySchema>;

/** 200 reply of `GET /v1/events`: events after `after`, in log order, and the log's head position (its version). */
export const EventsReplySchema = z.object({ events: z.array(RecordedEventSchema), head: z.number().int().nonnegative() });
export type EventsReply = z.infer<typeof EventsReplySchema>;

/** 200 reply of `GET /v1/rejections`: recorded rejections (`FenceRejected` data and log position), oldest first, the most recent 1000. */
export const RejectionsReplySchema = z.object({ rejections: z.array(RecordedRejectionSchema) });
export type RejectionsReply = z.infer<typeof RejectionsReplySchema>;

/**
 * Reply of `GET /readyz`: 200 with `ready: true` once recovery has finished; 503 with `ready: false`
 * and the `reason` (`recovering`, `superseded`, `unhealthy`, `closed`, or a recovery failure) otherwise.
 */
export const ReadinessReplySchema = z.object({
  ready: z.boolean(),
  status: z.enum(['recovering', 'ready', 'superseded', 'unhealthy', 'closed', 'failed']),
  reason: z.string().optional(),
  bootId: z.string().optional(),
  position: z.number().int().nonnegative().optional(),
});
export type ReadinessReply = z.infer<typeof ReadinessReplySchema>;
