/**
 * Where a time shown by the dashboard comes from. Every event carries two clocks: the
 * coordinator's wall clock (`wallMillis`, display only, the one axis shared across boots) and
 * its monotonic clock (`atMillis`, in the domain named by `bootId`). The dashboard draws on wall
 * time and always says which clock a number was read from.
 *
 * @see docs/design.md § "The event-sourced coordinator" (Events: monotonic reading + boot id + wall time)
 */
import type { RecordedEvent } from '@lease-fence/protocol';

/**
 * The two clock readings of one logged event, and its log position.
 * `wallMillis` is coordinator wall-clock epoch milliseconds (display only); `atMillis` is the
 * coordinator's monotonic reading in milliseconds, in the clock domain `bootId`.
 */
export interface ClockStamp {
  /** 1-based log position of the event that carries these readings. */
  readonly position: number;
  /** Coordinator wall-clock epoch milliseconds: display only. */
  readonly wallMillis: number;
  /** The coordinator boot whose monotonic clock read `atMillis` (the clock domain). */
  readonly bootId: string;
  /** Monotonic milliseconds in the `bootId` domain. Never compared across boots. */
  readonly atMillis: number;
}

/**
 * The clock readings of a recorded event.
 *
 * @param recorded - A schema-valid recorded event.
 * @returns Its position, wall time, boot id and monotonic reading.
 */
export function stampOf(recorded: RecordedEvent): ClockStamp {
  const { bootId, atMillis, wallMillis } = recorded.event.data;
  return { position: recorded.position, wallMillis, bootId, atMillis };
}

/**
 * Converts a monotonic instant of the stamp's boot into wall time, anchored at the stamp:
 * `stamp.wallMillis + (monotonicMillis - stamp.atMillis)`. This is an estimate for display (the
 * wall clock may drift or step); the monotonic value remains the coordinator's truth.
 *
 * @param stamp - The reading pair that anchors the conversion.
 * @param monotonicMillis - Milliseconds in `stamp.bootId`'s domain.
 * @returns Projected wall-clock epoch milliseconds.
 */
export function projectToWall(stamp: ClockStamp, monotonicMillis: number): number {
  return stamp.wallMillis + (monotonicMillis - stamp.atMillis);
}
