/**
 * The one encoding of an `event` frame of `/v1/stream`, used both by a viewer's own catch-up read
 * and by the shared live fan-out, so a viewer that switches from one to the other receives
 * byte-identical frames for the same event.
 */
import type { RecordedEvent } from '@lease-fence/coordinator-core';
import type { EventFrame } from '@lease-fence/protocol';

/**
 * Serializes `recorded` as the JSON text of an `event` frame:
 * `{"type":"event","position":…,"recordedAtMillis":…,"event":…}` (keys in this order).
 * @param recorded - A recorded event, as a subscription delivers it.
 * @returns The frame's JSON text.
 * @see libs/protocol/src/stream.ts `EventFrameSchema`
 */
export function encodeEventFrame(recorded: RecordedEvent): string {
  const frame: EventFrame = {
    type: 'event',
    position: recorded.position,
    recordedAtMillis: recorded.recordedAtMillis,
    event: recorded.event,
  };
  return JSON.stringify(frame);
}
