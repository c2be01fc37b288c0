/**
 * Gate status: what a gate process observes about itself and tells the coordinator now and then
 * (over its gate link as a `status` frame, or `POST /v1/gates/status` when the link is not open),
 * and what `GET /v1/gates` serves back. Observation, not a fact of the log: the coordinator keeps
 * the latest status per (gate, resource) in memory only, and a restart forgets it until the next
 * report.
 */
import { z } from 'zod';
import { HolderFenceSchema, IdSchema, MillisSchema } from './events.js';

/** Most resources one gate link may guard, and one status report may name. */
export const MAX_GUARDED_RESOURCES = 256;

/** A count a gate keeps since it started (a restart starts again at 0). */
const CountSchema = z.number().int().nonnegative();

/** One resource of a gate status report. */
export const GateResourceStatusSchema = z.strictObject({
  resource: IdSchema,
  /** The gate's durable floor: the holder and fence it admits now; `null` before its first write or admit. */
  floor: z.strictObject(HolderFenceSchema.shape).nullable(),
  /** Refusals durable in the gate's outbox and not yet acknowledged by the coordinator. */
  outboxBacklog: CountSchema,
  /** Writes the gate refused for a stale or double-granted fence, ever: its last refusal seq (durable, so a restart keeps it). */
  refusals: CountSchema,
  /** Writes refused for a missing, malformed, altered or foreign token since the gate process started. */
  invalidTokens: CountSchema,
});
/** The parsed shape of {@link GateResourceStatusSchema}. */
export type GateResourceStatus = z.infer<typeof GateResourceStatusSchema>;

/** `POST /v1/gates/status`: a gate's status, one entry per resource it guards (each covered by its token). */
export const GateStatusBodySchema = z.strictObject({
  resources: z
    .array(GateResourceStatusSchema)
    .min(1, 'must name at least one resource')
    .max(MAX_GUARDED_RESOURCES, `must name at most ${MAX_GUARDED_RESOURCES} resources`),
  /** The gate's wall clock when it made the report (epoch milliseconds, display only). */
  reportedAtMillis: MillisSchema,
});
/** The parsed shape of {@link GateStatusBodySchema}. */
export type GateStatusBody = z.infer<typeof GateStatusBodySchema>;

/** gate → coordinator on the gate link: the same report as {@link GateStatusBodySchema}. */
export const StatusFrameSchema = z.object({ type: z.literal('status'), ...GateStatusBodySchema.shape });
/** The parsed shape of {@link StatusFrameSchema}. */
export type StatusFrame = z.infer<typeof StatusFrameSchema>;

/** One resource of a gate in `GET /v1/gates`: its last report, and when the coordinator got it. */
export const WireGateResourceSchema = GateResourceStatusSchema.extend({
  /** The gate's wall clock at that report (epoch milliseconds, display only). */
  reportedAtMillis: MillisSchema,
  /** The coordinator's wall clock when that report arrived (epoch milliseconds). */
  lastContactMillis: MillisSchema,
});

/** One gate in `GET /v1/gates`. */
export const WireGateSchema = z.object({
  gateId: IdSchema,
  /** The latest of its resources' `lastContactMillis` (coordinator wall clock, epoch milliseconds). */
  lastContactMillis: MillisSchema,
  resources: z.array(WireGateResourceSchema),
});
/** The parsed shape of {@link WireGateSchema}. */
export type WireGate = z.infer<typeof WireGateSchema>;

/** `GET /v1/gates`: every gate that reported since the coordinator started, by gate id, with `nowMillis` (coordinator wall clock) to age them against. */
export const GatesReplySchema = z.object({ nowMillis: MillisSchema, gates: z.array(WireGateSchema) });
/** The parsed shape of {@link GatesReplySchema}. */
export type GatesReply = z.infer<typeof GatesReplySchema>;
