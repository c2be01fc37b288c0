/**
 * Parses one WebSocket text frame with the protocol's `StreamFrameSchema`.
 */
import { StreamFrameSchema, type StreamFrame } from '@lease-fence/protocol';

/** A parsed frame, or what is wrong with it (data, not thrown). */
export type ParseFrameResult =
  { readonly ok: true; readonly frame: StreamFrame } | { readonly ok: false; readonly message: string };

/**
 * Parses a frame received on `/v1/stream`.
 *
 * @param data - The message's data: a JSON text frame.
 * @returns The frame, or a message naming the first invalid field.
 */
export function parseStreamFrame(data: unknown): ParseFrameResult {
  if (typeof data !== 'string') return { ok: false, message: `expected a text frame, got ${typeof data}` };
  let raw: unknown;
  try {
    raw = JSON.parse(data);
  } catch (error) {
    return { ok: false, message: `frame is not JSON: ${(error as Error).message}` };
  }
  const parsed = StreamFrameSchema.safeParse(raw);
  if (parsed.success) return { ok: true, frame: parsed.data };
  const issue = parsed.error.issues[0];
  const path = issue === undefined || issue.path.length === 0 ? 'frame' : issue.path.join('.');
  return { ok: false, message: `invalid frame: ${path}: ${issue?.message ?? 'does not match the protocol'}` };
}
