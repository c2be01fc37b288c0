/**
 * The demo's log: one readable line per step, the same shape for every actor, so the story of
 * a run can be read top to bottom:
 *
 * ```
 * 12:00:03.412  agent-2        deploy-slot-a  granted fence 7 (deadline in 2.90 s)
 * 12:00:08.017  deploy-slot    deploy-slot-a  REFUSED stale write: fence 6 (agent-1) < floor 7 (agent-2)
 * ```
 */

/** Width of the actor column. */
const ACTOR_WIDTH = 14;
/** Width of the resource column. */
const RESOURCE_WIDTH = 14;

/**
 * Formats one log line: wall-clock time (local, display only), actor, resource (or `-`), message.
 * @param wallMillis - Epoch milliseconds of the step.
 */
export const formatLine = (
  wallMillis: number,
  actor: string,
  resource: string | undefined,
  message: string,
): string => {
  const time = new Date(wallMillis);
  const clock = [time.getHours(), time.getMinutes(), time.getSeconds()]
    .map((part) => String(part).padStart(2, '0'))
    .join(':');
  return `${clock}.${String(time.getMilliseconds()).padStart(3, '0')}  ${actor.padEnd(ACTOR_WIDTH)} ${(resource ?? '-').padEnd(RESOURCE_WIDTH)} ${message}`;
};

/** Writes lines for one actor. */
export type Logger = (resource: string | undefined, message: string) => void;

/** A logger that prints {@link formatLine} lines for `actor` to stdout. */
export const createLogger =
  (actor: string, write: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Logger =>
  (resource, message) =>
    write(formatLine(Date.now(), actor, resource, message));

/** `2900` → `2.90 s`; durations in the log are always seconds with two decimals. */
export const seconds = (millis: number): string => `${(millis / 1000).toFixed(2)} s`;
