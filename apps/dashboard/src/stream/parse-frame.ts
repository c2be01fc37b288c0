/**
 * Parses one WebSocket text message of a stream opened with `batch=1`: one frame, or a `batch` of
 * several, checked with the protocol's `StreamMessageSchema` (libs/protocol/src/stream.ts).
 */
import { StreamMessageSchema, type StreamFrame } from '@lease-fence/protocol';

/** The frames of a parsed message, in order, or what is wrong with it (data, not thrown). */
export type ParseFrameResult =
  { readonly ok: true; readonly frames: readonly StreamFrame[] } | { readonly ok: false; readonly message: string };

/**
 * Parses a message received on `/v1/stream?…&batch=1`.
 *
 * @param data - The message's data: a JSON text frame.
 * @returns Its frames (one, or each frame of a `batch` in order), or a message naming the first
 *   invalid field (a batch with one invalid frame is refused whole: `frames.<index>.<field>`).
 */
export function parseStreamMessage(data: unknown): ParseFrameResult {
  if (typeof data !== 'string') return { ok: false, message: `expected a text frame, got ${typeof data}` };
  let raw: unknown;
  try {
    raw = JSON.parse(data);
  } catch (error) {
    return { ok: false, message: `frame is not JSON: ${(error as Error).message}` };
  }
  const parsed = StreamMessageSchema.safeParse(raw);
  if (parsed.success) return { ok: true, frames: parsed.data.type === 'batch' ? parsed.data.frames : [parsed.data] };
  const issue = parsed.error.issues[0];
  const path = issue === undefined || issue.path.length === 0 ? 'frame' : issue.path.join('.');
  return { ok: false, message: `invalid frame: ${path}: ${issue?.message ?? 'does not match the protocol'}` };
}
