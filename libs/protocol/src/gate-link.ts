/**
 * Frames of the gate link `/v1/gates/link`, the WebSocket a resource's gate process holds open
 * to the coordinator for fence-first handover (`LEASE_FENCE_FENCE_FIRST`). It authenticates with
 * a gate token (`Authorization: Bearer <token>`, or `?token=`), then:
 *
 * 1. gate → `guard`: the resources it guards (each covered by its token's patterns);
 *    coordinator → `guarding`: the resources now routed to it;
 * 2. coordinator → `admit`: "durably raise your floor to `fence` for `holderId` on `resource`";
 * 3. gate → `admitted` (same `id`, `resource`, `fence`) once the raised floor is durable. Only
 *    then does the coordinator grant the lease.
 *
 * At any time, gate → `status`: its floors, outbox backlog and counters (observation, kept in the
 * coordinator's memory and served by `GET /v1/gates`; see `./gate-status.ts`).
 *
 * A frame the coordinator cannot accept gets an `error` frame naming the field; it changes no
 * state and the link stays open.
 */
import { z } from 'zod';
import { FenceSchema, IdSchema } from './events.js';
import { MAX_GUARDED_RESOURCES, StatusFrameSchema } from './gate-status.js';

/** The path of the gate link. */
export const GATE_LINK_PATH = '/v1/gates/link';

export { MAX_GUARDED_RESOURCES } from './gate-status.js';

/** gate → coordinator: the resources this gate guards (replaces an earlier `guard`). */
export const GuardFrameSchema = z.object({
  type: z.literal('guard'),
  resources: z
    .array(IdSchema)
    .min(1, 'must name at least one resource')
    .max(MAX_GUARDED_RESOURCES, `must name at most ${MAX_GUARDED_RESOURCES} resources`),
});

/** gate → coordinator: the floor of `resource` is durably at `fence`, answering admit `id`. */
export const AdmittedFrameSchema = z.object({
  type: z.literal('admitted'),
  id: z.number().int().positive(),
  resource: IdSchema,
  fence: FenceSchema,
});

/** Any frame a gate sends (`status`: see `./gate-status.ts`). */
export const GateToCoordinatorFrameSchema = z.discriminatedUnion('type', [
  GuardFrameSchema,
  AdmittedFrameSchema,
  StatusFrameSchema,
]);
/** The parsed shape of {@link GateToCoordinatorFrameSchema}. */
export type GateToCoordinatorFrame = z.infer<typeof GateToCoordinatorFrameSchema>;

/** coordinator → gate: admit requests for these resources now come over this link. */
export const GuardingFrameSchema = z.object({ type: z.literal('guarding'), resources: z.array(IdSchema) });

/** coordinator → gate: raise the floor of `resource` to `fence` for `holderId`, make it durable, answer `admitted` with `id`. */
export const AdmitFrameSchema = z.object({
  type: z.literal('admit'),
  /** This link's request number, echoed by `admitted`. */
  id: z.number().int().positive(),
  resource: IdSchema,
  holderId: IdSchema,
  fence: FenceSchema,
});

/** The parsed shape of {@link AdmitFrameSchema}. */
export type AdmitFrame = z.infer<typeof AdmitFrameSchema>;

/** coordinator → gate: a frame was refused (nothing changed). `field` names the offending field, dotted. */
export const GateLinkErrorFrameSchema = z.object({ type: z.literal('error'), field: z.string(), message: z.string() });

/** Any frame the coordinator sends on the gate link. */
export const CoordinatorToGateFrameSchema = z.discriminatedUnion('type', [
  GuardingFrameSchema,
  AdmitFrameSchema,
  GateLinkErrorFrameSchema,
]);
/** The parsed shape of {@link CoordinatorToGateFrameSchema}. */
export type CoordinatorToGateFrame = z.infer<typeof CoordinatorToGateFrameSchema>;
