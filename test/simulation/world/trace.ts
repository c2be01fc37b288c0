/**
 * The run's timeline: one line per step, in the order the steps happened, e.g.
 * `t=1234ms    agent-2 → coordinator  acquire slot-a (req agent-2/r7)`. Everything in it is
 * derived from the simulation's own state, so the same input always gives the same trace,
 * byte for byte (no wall time, no durations measured on the host).
 */

/** Formats true time for the trace: `t=1234ms`, padded to a fixed width. */
export const formatTime = (atMillis: number): string => `t=${Math.round(atMillis)}ms`.padEnd(10);

/** Formats a clock reading: `1234.5ms@agent-1` (one decimal). */
export const formatReading = (millis: number, domain: string): string =>
  `${(Math.round(millis * 10) / 10).toString()}ms@${domain}`;

/** The ordered list of trace lines of one run. */
export class Trace {
  private readonly entries: string[] = [];

  constructor(private readonly now: () => number) {}

  /** Appends `t=…  actor  text`. */
  step(actor: string, text: string): void {
    this.entries.push(`${formatTime(this.now())}  ${actor.padEnd(12)} ${text}`);
  }

  /** Appends a line without an actor column (section markers, violations). */
  note(text: string): void {
    this.entries.push(`${formatTime(this.now())}  ${text}`);
  }

  /** The lines so far. */
  get lines(): readonly string[] {
    return this.entries;
  }

  /** The whole trace as text, one step per line. */
  toString(): string {
    return this.entries.join('\n');
  }
}
