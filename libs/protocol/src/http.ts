/**
 * HTTP request bodies and replies of the coordinator's `/v1` API, shared by the service (which
 * parses requests with them) and the SDK (which parses replies with them).
 *
 * @see docs/design.md § "The library's rules" for the outcomes' meaning.
 */
import { z } from 'zod';
import {
  FenceSchema,
  HolderFenceSchema,
  IdSchema,
  MillisSchema,
  RecordedEventSchema,
  RecordedRejectionSchema,
} from './events.js';
import type { DenialReason } from './denial-reason.js';
import { SignedTokenSchema } from './signed-grant.js';

/**
 * A requested TTL in a request body: a positive whole number of milliseconds. Deliberately no
 * upper bound and no safe-integer check here: the coordinator checks the value against its
 * configured bounds (`LEASE_FENCE_MIN_TTL_MILLIS` / `LEASE_FENCE_MAX_TTL_MILLIS`), so a huge value
 * such as `1e20` is refused as out of range, naming those bounds, rather than as "not an integer".
 */
export const TtlMillisSchema = z
  .number()
  .positive('must be positive (milliseconds)')
  .multipleOf(1, 'must be an integer (milliseconds)');

/** `POST /v1/leases/:resource/acquire`. `ttlMillis` defaults to the coordinator's configured TTL. */
export const AcquireBodySchema = z.strictObject({
  /** The caller's id for this intent; a retry reuses it and gets the same grant. */
  requestId: IdSchema,
  /** Requested lease duration in milliseconds, within the coordinator's configured bounds. */
  ttlMillis: TtlMillisSchema.optional(),
});
/** The parsed shape of {@link AcquireBodySchema}. */
export type AcquireBody = z.infer<typeof AcquireBodySchema>;

/** `POST /v1/leases/:resource/renew`. */
export const RenewBodySchema = z.strictObject({
  requestId: IdSchema,
  fence: FenceSchema,
  ttlMillis: TtlMillisSchema.optional(),
});
/** The parsed shape of {@link RenewBodySchema}. */
export type RenewBody = z.infer<typeof RenewBodySchema>;

/** `POST /v1/leases/:resource/release`. */
export const ReleaseBodySchema = z.strictObject({ fence: FenceSchema });
/** The parsed shape of {@link ReleaseBodySchema}. */
export type ReleaseBody = z.infer<typeof ReleaseBodySchema>;

/** An instant on the wire: milliseconds in a named clock domain. */
export const WireInstantSchema = z.object({ millis: MillisSchema, domain: z.string().min(1) });
/** The parsed shape of {@link WireInstantSchema}. */
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
  /**
   * The grant signed by the coordinator (a compact JWS, see `signed-grant.ts`): show it to the
   * resource, whose gate verifies it before comparing the fence. The same for every renewal of
   * this fence and for a retried requestId.
   */
  signedToken: SignedTokenSchema,
});
/** The parsed shape of {@link WireGrantSchema}. */
export type WireGrant = z.infer<typeof WireGrantSchema>;

/** 200 reply of acquire and renew. */
export const GrantReplySchema = z.object({ ok: z.literal(true), grant: WireGrantSchema });
/** The parsed shape of {@link GrantReplySchema}. */
export type GrantReply = z.infer<typeof GrantReplySchema>;
/** 409 reply of acquire: another holder has it. */
export const HeldReplySchema = z.object({
  ok: z.literal(false),
  reason: z.literal('held' satisfies DenialReason),
  heldBy: IdSchema,
  retryAfterMillis: MillisSchema,
});
/** 409 reply of acquire: the caller already holds it (never a second fence). */
export const AlreadyHeldReplySchema = z.object({
  ok: z.literal(false),
  reason: z.literal('already-held' satisfies DenialReason),
  heldBy: IdSchema,
  fence: FenceSchema,
  retryAfterMillis: MillisSchema,
});
/**
 * 409 reply of acquire: the resource is in its lock-delay (`LEASE_FENCE_LOCK_DELAY`): its latest
 * holder was lost uncleanly (its lease expired, or a gate refused one of its writes) less than the
 * configured delay ago, so it is not granted to anyone until `retryAfterMillis` have passed.
 */
export const LockDelayReplySchema = z.object({
  ok: z.literal(false),
  reason: z.literal('lock-delay' satisfies DenialReason),
  retryAfterMillis: MillisSchema,
});
/** 410 reply: the lease (or the grant a retried requestId was owed) has ended; never resurrected. */
export const ExpiredReplySchema = z.object({
  ok: z.literal(false),
  reason: z.literal('expired' satisfies DenialReason),
  fence: FenceSchema.optional(),
});
/** 409 reply of renew and release: the caller does not hold that fence. */
export const NotHolderReplySchema = z.object({
  ok: z.literal(false),
  reason: z.literal('not-holder' satisfies DenialReason),
});

/** Every reply of acquire: 200 grant, 409 `held` / `already-held` / `lock-delay`, 410 `expired`. */
export const AcquireReplySchema = z
  .discriminatedUnion('reason', [HeldReplySchema, AlreadyHeldReplySchema, LockDelayReplySchema, ExpiredReplySchema])
  .or(GrantReplySchema);
/** The parsed shape of {@link AcquireReplySchema}. */
export type AcquireReply = z.infer<typeof AcquireReplySchema>;
/** Every reply of renew: 200 grant, 410 `expired`, 409 `not-holder`. */
export const RenewReplySchema = z.union([GrantReplySchema, ExpiredReplySchema, NotHolderReplySchema]);
/** The parsed shape of {@link RenewReplySchema}. */
export type RenewReply = z.infer<typeof RenewReplySchema>;
/**
 * Every reply of release: 200 `{ ok: true }`, 410 `expired` (that generation already ended:
 * expired, released or superseded), 409 `not-holder` (a fence never issued to the caller here).
 */
export const ReleaseReplySchema = z.union([
  z.object({ ok: z.literal(true) }),
  ExpiredReplySchema,
  NotHolderReplySchema,
]);
/** The parsed shape of {@link ReleaseReplySchema}. */
export type ReleaseReply = z.infer<typeof ReleaseReplySchema>;

/**
 * {@link HolderFenceSchema} as a request body holds it: the same fields and rules, and unknown
 * fields refused (every request schema is strict at every depth; the event schema stays as it is,
 * since the log holds only what the coordinator wrote).
 */
export const HolderFenceBodySchema = z.strictObject(HolderFenceSchema.shape);

/**
 * `POST /v1/resources/:resource/rejections`: a FenceGate rejection record as the library makes
 * it. Idempotent by (authenticated gate, resource, seq). 202 on success. Unknown fields are
 * refused here and inside `rejected` and `current`.
 */
export const RejectionBodySchema = z.strictObject({
  seq: z.number().int().positive(), // a gate numbers its refusals of a resource from 1, without gaps
  resource: IdSchema,
  kind: z.enum(['stale', 'double-grant']).default('stale'),
  rejected: HolderFenceBodySchema,
  current: HolderFenceBodySchema,
  /** The gate's wall clock at the refusal (epoch milliseconds, display only). */
  wallMillis: MillisSchema.optional(),
});
/** The parsed shape of {@link RejectionBodySchema}. */
export type RejectionBody = z.infer<typeof RejectionBodySchema>;

/**
 * Most refusals one `POST /v1/resources/:resource/rejections/batch` carries. With
 * {@link REJECTION_BATCH_MAX_BODY_BYTES} it bounds what one request asks of the coordinator (one
 * decision per item, one group commit); a gate with more waiting sends several batches, in order.
 */
export const REJECTION_BATCH_MAX_ITEMS = 64;

/**
 * Largest body a gate sends as one batch, in bytes: the coordinator's default body limit
 * (`LEASE_FENCE_MAX_BODY_BYTES`, 16 384), so a batch is never refused 413 by a coordinator with
 * the default. A gate stops adding items before the body would exceed it (64 typical refusals
 * take about 12 KiB; refusals with 200-character holder ids fewer per batch).
 */
export const REJECTION_BATCH_MAX_BODY_BYTES = 16_384;

/** One refusal of a {@link RejectionBatchBodySchema}: a {@link RejectionBodySchema} without `resource` (the path names it). */
export const RejectionBatchItemSchema = RejectionBodySchema.omit({ resource: true });
/** The parsed shape of {@link RejectionBatchItemSchema}. */
export type RejectionBatchItem = z.infer<typeof RejectionBatchItemSchema>;

/**
 * `POST /v1/resources/:resource/rejections/batch`: refusals of one resource waiting in a gate's
 * outbox, 1 to {@link REJECTION_BATCH_MAX_ITEMS}, `seq` strictly ascending (an issue naming
 * `items.<i>.seq` otherwise). Each item is what the single route takes, less `resource`.
 */
export const RejectionBatchBodySchema = z
  .strictObject({
    items: z
      .array(RejectionBatchItemSchema, { error: 'must be an array of refusals' })
      .min(1, 'must hold at least one refusal')
      .max(REJECTION_BATCH_MAX_ITEMS, `must hold at most ${REJECTION_BATCH_MAX_ITEMS} refusals`),
  })
  .superRefine(({ items }, context) => {
    for (let index = 1; index < items.length; index += 1) {
      const previous = items[index - 1]!.seq;
      if (items[index]!.seq <= previous)
        context.addIssue({
          code: 'custom',
          path: ['items', index, 'seq'],
          message: `must be above the previous item's seq ${previous}: seqs strictly ascending`,
        });
    }
  });
/** The parsed shape of {@link RejectionBatchBodySchema}. */
export type RejectionBatchBody = z.infer<typeof RejectionBatchBodySchema>;

/** `POST /v1/resources/:resource/admit`: a gate records that it raised its floor to `fence`. */
export const AdmitBodySchema = z.strictObject({ holderId: IdSchema, fence: FenceSchema });
/** The parsed shape of {@link AdmitBodySchema}. */
export type AdmitBody = z.infer<typeof AdmitBodySchema>;

/**
 * `POST /v1/resources/:resource/floor`: a gate reports its current floor (on start, and from time
 * to time), so a coordinator whose log was lost raises its fence counter above it.
 */
export const FloorReportBodySchema = AdmitBodySchema; // the same shape: the floor's holder and fence
/** The parsed shape of {@link FloorReportBodySchema}. */
export type FloorReportBody = z.infer<typeof FloorReportBodySchema>;

/**
 * Reply of `POST /v1/resources/:resource/floor`: `raised` when the floor was above every fence the
 * log had issued for the resource (a `FenceFloorReported` event is durable), `fenceCounter` the
 * coordinator's fence counter after it: the next grant gets a higher fence.
 */
export const FloorReportReplySchema = z.object({
  ok: z.literal(true),
  raised: z.boolean(),
  fenceCounter: z.number().int().nonnegative(),
});
/** The parsed shape of {@link FloorReportReplySchema}. */
export type FloorReportReply = z.infer<typeof FloorReportReplySchema>;

/**
 * Reply of `GET /v1/resources/:resource/gate-recovery` (gate token): what a gate reconciles with
 * at its start, before it admits any write. `latestGrant`: the latest fence granted on the
 * resource (current or ended; `null` when never granted), with its holder while it is the
 * current lease (`holderId: null` once it ended). `lastRejectionSeq`: the highest refusal seq of
 * this gate (the token's gate id) on the resource that the log recorded or declared missing, 0
 * when none; the gate's next refusal must be numbered above it.
 */
export const GateRecoveryReplySchema = z.object({
  ok: z.literal(true),
  resource: IdSchema,
  latestGrant: z.object({ holderId: IdSchema.nullable(), fence: FenceSchema }).nullable(),
  lastRejectionSeq: z.number().int().nonnegative(),
});
/** The parsed shape of {@link GateRecoveryReplySchema}. */
export type GateRecoveryReply = z.infer<typeof GateRecoveryReplySchema>;

/** What {@link wholeNumberParam} accepts: the bounds, and what the number means (for messages). */
export interface WholeNumberParamOptions {
  /** Smallest accepted value (inclusive). */
  readonly min: number;
  /** Largest accepted value (inclusive); at most `Number.MAX_SAFE_INTEGER`. */
  readonly max: number;
  /** What the number is, named in messages, e.g. `a log position`. */
  readonly meaning: string;
}

/**
 * A query parameter holding a whole number, parsed strictly: decimal digits only (no sign, no
 * `0x`, no exponent, no spaces), present at most once, not empty, within `[min, max]`. The input
 * is the raw query value: a string, or an array of strings when the parameter was repeated (as
 * Express's query parser and {@link queryParamsOf} give it). Messages name the problem; the
 * caller's issue path names the parameter.
 *
 * @example `wholeNumberParam({ min: 0, max: Number.MAX_SAFE_INTEGER, meaning: 'a log position' }).default(0)`
 */
export const wholeNumberParam = ({ min, max, meaning }: WholeNumberParamOptions) =>
  z
    .string({
      error: (issue) => (Array.isArray(issue.input) ? 'must be given once' : `must be a whole number (${meaning})`),
    })
    .min(1, { error: `must not be empty: give ${meaning} or leave the parameter out`, abort: true })
    .regex(/^[0-9]+$/, {
      error: `must be a whole number in decimal digits only (${meaning}, ${min} to ${max})`,
      abort: true,
    })
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min} (${meaning})`).max(max, `must be at most ${max} (${meaning})`));

/**
 * `after` of `GET /v1/events` and of the stream `/v1/stream`: the last log position the caller
 * has (0 = from the start). One schema, so both answer a bad value with the same words.
 */
export const AfterParamSchema = wholeNumberParam({
  min: 0,
  max: Number.MAX_SAFE_INTEGER,
  meaning: 'a log position',
}).default(0);

/**
 * Raw query parameters as {@link wholeNumberParam} expects them: each name once with its value,
 * or with every value in order when it was repeated.
 */
export function queryParamsOf(params: URLSearchParams): Record<string, string | string[]> {
  const record: Record<string, string | string[]> = {};
  for (const [name, value] of params) {
    const seen = record[name];
    record[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return record;
}

/**
 * `GET /v1/events?after=&limit=`. `after` is a log position (0 = from the start); `limit` is 1 to
 * 10 000 (default 1000). Unknown parameters are refused, like unknown body fields.
 */
export const EventsQuerySchema = z.strictObject({
  after: AfterParamSchema,
  limit: wholeNumberParam({ min: 1, max: 10_000, meaning: 'events per page' }).default(1000),
});

/**
 * The query of a viewer GET that takes no parameters (`GET /v1/leases`, `GET /v1/rejections`):
 * every parameter is unknown and refused naming it, as on `GET /v1/events`.
 */
export const NoQuerySchema = z.strictObject({});

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
/** The parsed shape of {@link WireLeaseSchema}. */
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
/** The parsed shape of {@link ErrorReplySchema}. */
export type ErrorReply = z.infer<typeof ErrorReplySchema>;

/** 202 reply of `POST /v1/resources/:resource/rejections`; `duplicate` = that (gate, resource, seq) was already recorded. */
export const RejectionAcceptedReplySchema = z.object({ ok: z.literal(true), duplicate: z.boolean() });
/** The parsed shape of {@link RejectionAcceptedReplySchema}. */
export type RejectionAcceptedReply = z.infer<typeof RejectionAcceptedReplySchema>;

/**
 * 202 reply of `POST /v1/resources/:resource/rejections/batch`: one outcome per item, in order.
 * `{ ok: true, duplicate }` as the single route answers; `{ ok: false, reason: 'seq-conflict',
 * message }` where the single route answers 409 (that item only: nothing of it appended, the
 * other items decided as usual).
 */
export const RejectionBatchReplySchema = z.object({
  ok: z.literal(true),
  items: z.array(
    z.union([
      RejectionAcceptedReplySchema,
      z.object({ ok: z.literal(false), reason: z.literal('seq-conflict'), message: z.string() }),
    ]),
  ),
});
/** The parsed shape of {@link RejectionBatchReplySchema}. */
export type RejectionBatchReply = z.infer<typeof RejectionBatchReplySchema>;

/** `{ ok: true }`: 200 reply of release, 202 reply of `POST /v1/resources/:resource/admit` (the `FenceAdmitted` event is durable). */
export const OkReplySchema = z.object({ ok: z.literal(true) });
/** The parsed shape of {@link OkReplySchema}. */
export type OkReply = z.infer<typeof OkReplySchema>;

/** 200 reply of `GET /v1/leases`: the current holders (including leases carried across a restart, in grace). */
export const LeasesReplySchema = z.object({ leases: z.array(WireLeaseSchema) });
/** The parsed shape of {@link LeasesReplySchema}. */
export type LeasesReply = z.infer<typeof LeasesReplySchema>;

/** 200 reply of `GET /v1/events`: events after `after`, in log order, and the log's head position (its version). */
export const EventsReplySchema = z.object({
  events: z.array(RecordedEventSchema),
  head: z.number().int().nonnegative(),
});
/** The parsed shape of {@link EventsReplySchema}. */
export type EventsReply = z.infer<typeof EventsReplySchema>;

/**
 * How many recorded rejections `GET /v1/rejections` lists at most: the most recent ones of all
 * resources. A reply this long may leave older ones out (the log keeps them all).
 */
export const REJECTIONS_LISTED = 1000;

/** 200 reply of `GET /v1/rejections`: recorded rejections (`FenceRejected` data and log position), oldest first, the most recent {@link REJECTIONS_LISTED}. */
export const RejectionsReplySchema = z.object({ rejections: z.array(RecordedRejectionSchema) });
/** The parsed shape of {@link RejectionsReplySchema}. */
export type RejectionsReply = z.infer<typeof RejectionsReplySchema>;

/**
 * Reply of `GET /readyz`: 200 with `ready: true` once recovery has finished; 503 with `ready: false`
 * and the `reason` (`recovering`, `standby` (following another coordinator's log until it falls
 * silent), `superseded`, `unhealthy`, `closed`, or a recovery failure) otherwise.
 */
export const ReadinessReplySchema = z.object({
  ready: z.boolean(),
  status: z.enum(['recovering', 'standby', 'ready', 'superseded', 'unhealthy', 'closed', 'failed']),
  reason: z.string().optional(),
  bootId: z.string().optional(),
  position: z.number().int().nonnegative().optional(),
});
/** The parsed shape of {@link ReadinessReplySchema}. */
export type ReadinessReply = z.infer<typeof ReadinessReplySchema>;

/**
 * A bearer token as the coordinator's tokens file lists it and clients send it: 1 to 4096 printable ASCII
 * characters without spaces (it travels in an `Authorization` header). Messages never echo the token.
 */
export const BearerTokenSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(4096, 'must be at most 4096 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

/**
 * 200 reply of `GET /v1/whoami`: who the bearer token authenticates as, from the coordinator's tokens file
 * (never the token itself). An agent's `holderId` is the holder every lease it takes is granted to, so a
 * client can be configured from the token alone; a gate's `resources` are the patterns it may report for.
 */
export const WhoAmIReplySchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('agent'), holderId: IdSchema }),
  z.object({ role: z.literal('gate'), gateId: IdSchema, resources: z.array(z.string()) }),
  z.object({ role: z.literal('viewer') }),
]);
/** The parsed shape of {@link WhoAmIReplySchema}. */
export type WhoAmIReply = z.infer<typeof WhoAmIReplySchema>;
