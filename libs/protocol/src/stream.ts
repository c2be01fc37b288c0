/**
 * Frames of the WebSocket stream `/v1/stream?after=<position>`: every log event after
 * `position` in order, then one `caught-up`, then live events, heartbeats and stats.
 * A client resumes after the last `position` it saw: no gap, no duplicate.
 * With `batch=1` the frames the server sends in one turn of its event loop arrive as one
 * `batch` message ({@link BatchFrameSchema}); without it, one message per frame.
 */
import { z } from 'zod';
import { CoordinatorEventSchema } from './events.js';
import { AfterParamSchema } from './http.js';

/** One log event at its 1-based position. */
export const EventFrameSchema = z.object({
  type: z.literal('event'),
  position: z.number().int().positive(),
  recordedAtMillis: z.number().nonnegative(),
  event: CoordinatorEventSchema,
});

/** The catch-up read reached the head of the log at `position`; what follows is live. */
export const CaughtUpFrameSchema = z.object({ type: z.literal('caught-up'), position: z.number().int().nonnegative() });

/** Sent when nothing else was sent for a while; `position` is the head of the log. */
export const HeartbeatFrameSchema = z.object({
  type: z.literal('heartbeat'),
  position: z.number().int().nonnegative(),
  wallMillis: z.number().nonnegative(),
});

/**
 * Counters that change no state and so are not in the log: denials by reason, and totals since
 * this coordinator boot. Sent about once a second.
 */
export const StatsFrameSchema = z.object({
  type: z.literal('stats'),
  bootId: z.string(),
  wallMillis: z.number().nonnegative(),
  /** Denied commands since boot, by outcome reason (`held`, `already-held`, `expired`, `not-holder`). */
  denials: z.record(z.string(), z.number().int().nonnegative()),
  grants: z.number().int().nonnegative(),
  renewals: z.number().int().nonnegative(),
  releases: z.number().int().nonnegative(),
  rejections: z.number().int().nonnegative(),
});

/**
 * The server is closing the stream; reconnect after `position` (the last event it sent).
 * `reason`: `slow-consumer`, `shutdown`, `log-closed`, `after-beyond-head` (then `position` is the
 * head of the log), `error`, or `event-log-corrupt`: the record at `corruptPosition` does not decode
 * and the coordinator serves nothing past it (`field` names the offending field, `message` is the
 * sentence `GET /v1/events` answers with; reconnecting meets the same record until it is repaired).
 */
export const ClosingFrameSchema = z.object({
  type: z.literal('closing'),
  reason: z.string(),
  position: z.number().int().nonnegative(),
  /** With `event-log-corrupt`: the position of the damaged record (after `position`), when known. */
  corruptPosition: z.number().int().positive().optional(),
  /** With `event-log-corrupt`: the record's field that does not decode (e.g. `data`), when known. */
  field: z.string().optional(),
  /** Why, in the words of the HTTP error reply (e.g. `event at position 300 is corrupt: data: …`). */
  message: z.string().optional(),
});

/** Any frame the server sends on the stream. Discriminated on `type`. */
export const StreamFrameSchema = z.discriminatedUnion('type', [
  EventFrameSchema,
  CaughtUpFrameSchema,
  HeartbeatFrameSchema,
  StatsFrameSchema,
  ClosingFrameSchema,
]);
/** The parsed shape of {@link StreamFrameSchema}. */
export type StreamFrame = z.infer<typeof StreamFrameSchema>;

/**
 * Two or more frames in one WebSocket message, in the order they were sent: handle each as if it
 * had arrived alone. Sent only to a client that asked for `batch=1` (see {@link StreamQuerySchema}),
 * whenever the server sends it more than one frame in one turn of its event loop (a group commit's
 * events, a catch-up page); a lone frame still comes as itself. One message per event cost a
 * browser about 0.2 ms of main thread each (task, `MessageEvent`, `JSON.parse`) at 2 000 events/s.
 */
export const BatchFrameSchema = z.object({ type: z.literal('batch'), frames: z.array(StreamFrameSchema).min(2) });
/** The parsed shape of {@link BatchFrameSchema}. */
export type BatchFrame = z.infer<typeof BatchFrameSchema>;

/** Any message of a stream opened with `batch=1`: one frame, or a {@link BatchFrameSchema} of several. */
export const StreamMessageSchema = z.discriminatedUnion('type', [...StreamFrameSchema.options, BatchFrameSchema]);
/** The parsed shape of {@link StreamMessageSchema}. */
export type StreamMessage = z.infer<typeof StreamMessageSchema>;
/** The parsed shape of {@link EventFrameSchema}. */
export type EventFrame = z.infer<typeof EventFrameSchema>;
/** The parsed shape of {@link ClosingFrameSchema}. */
export type ClosingFrame = z.infer<typeof ClosingFrameSchema>;
/** The parsed shape of {@link StatsFrameSchema}. */
export type StatsFrame = z.infer<typeof StatsFrameSchema>;

/**
 * Query of the stream's upgrade request `GET /v1/stream?after=<position>&token=<token>&batch=1`, as
 * {@link queryParamsOf} gives it. `after` is the last position the client has (0 = from the
 * start), with the same rules and messages as `GET /v1/events` ({@link AfterParamSchema}).
 * `token` is for browsers, which cannot set headers on a WebSocket; the Authorization header works too.
 * `batch=1` asks for {@link BatchFrameSchema} messages (absent: one message per frame, as before).
 * Unknown parameters are refused, as on `GET /v1/events`.
 */
export const StreamQuerySchema = z.strictObject({
  after: AfterParamSchema,
  token: z
    .string({ error: (issue) => (Array.isArray(issue.input) ? 'must be given once' : 'must be a string') })
    .optional(),
  batch: z.literal('1', { error: 'must be 1 (batch the frames of one turn into one message)' }).optional(),
});
/** The parsed shape of {@link StreamQuerySchema}. */
export type StreamQuery = z.infer<typeof StreamQuerySchema>;
