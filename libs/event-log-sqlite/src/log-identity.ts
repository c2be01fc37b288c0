/**
 * The log identity the data directory remembers: a random log id kept in the log's `meta` table
 * (`log_id`) and recorded in a marker file beside the log (`<log>.id`), as Kafka's
 * `meta.properties` cluster id and etcd's member directory do. A log that is lost (deleted,
 * truncated to 0 bytes) or replaced by another one then no longer matches the marker, and the
 * adapter refuses it instead of starting a new log that would issue fences again from 1.
 *
 * Why here, in the adapter, and not in the coordinator: the adapter owns the file and its
 * directory (the coordinator's lock `<log>.lock` lives beside it too, see its `log-lock.ts`), so every user of
 * `openSqliteEventLog` (the coordinator, a standby, tests, tools) gets the check, and the check
 * runs before the file is created or written.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { EventLogCorruptError } from '@lease-fence/coordinator-core';

/** The marker file of the log `file`: `<file>.id`, one line holding the log id. */
export const logIdFileOf = (file: string): string => `${file}.id`;

/** A new random log id (a UUID v4). */
export const newLogId = (): string => randomUUID();

/** What a log id looks like: what {@link newLogId} writes (a marker or meta value that is not one is refused). */
const LOG_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The log id the marker of `file` records, or `undefined` when there is no marker.
 * @throws {@link EventLogCorruptError} when the marker does not hold a log id.
 * @throws the `fs` error when the marker exists but cannot be read (permissions).
 */
export function readRecordedLogId(file: string): string | undefined {
  const markerFile = logIdFileOf(file);
  let text: string;
  try {
    text = readFileSync(markerFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const logId = text.trim();
  if (!LOG_ID.test(logId)) {
    throw new EventLogCorruptError({
      issues: [
        {
          path: '',
          message: `the log id marker ${markerFile} does not hold a log id (got ${JSON.stringify(text.slice(0, 80))}): restore it from a backup, or delete it if ${file} is the log this data directory should hold`,
        },
      ],
    });
  }
  return logId;
}

/**
 * Records `logId` as the log of `file`'s directory: written to a temporary file, fsynced, renamed
 * over the marker, and the directory fsynced, so a crash leaves either no marker or a whole one.
 * @throws the `fs` error when the directory is not writable.
 */
export function recordLogId(file: string, logId: string): void {
  const markerFile = logIdFileOf(file);
  const temporary = `${markerFile}.${process.pid}.tmp`;
  try {
    const fd = openSync(temporary, 'w', 0o644);
    try {
      writeSync(fd, `${logId}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, markerFile);
  } catch (error) {
    try {
      unlinkSync(temporary);
    } catch {
      // already renamed or never created
    }
    throw error;
  }
  const directory = openSync(dirname(markerFile), 'r');
  try {
    fsyncSync(directory);
  } finally {
    closeSync(directory);
  }
}

/**
 * The refusal of a log that is not the one the data directory's marker records: lost (missing,
 * 0 bytes, no tables), without an id, or another log put in its place. An
 * {@link EventLogCorruptError} (so every caller that refuses a corrupt log refuses this one, and
 * the coordinator exits 1), with a message of its own saying what happened and the two ways out.
 */
export class EventLogLostError extends EventLogCorruptError {
  /** The log file. */
  readonly file: string;
  /** The marker that records the data directory's log (`<file>.id`). */
  readonly markerFile: string;
  /** The log id the marker records. */
  readonly recordedLogId: string;
  /** What is there instead: `'missing'`, `'empty'`, `'without an id'`, or another log's id. */
  readonly found: string;

  constructor(file: string, recordedLogId: string, found: string) {
    const markerFile = logIdFileOf(file);
    const what =
      found === 'empty' || found === 'missing'
        ? `event log ${file} is ${found}`
        : found === 'without an id'
          ? `event log ${file} has no log id`
          : `event log ${file} is log ${found}`;
    const message = `${what}, but this data directory held log ${recordedLogId} (recorded in ${markerFile}): a lost log would issue fences again from 1. Restore the log from a backup, or, to start a new log on purpose, delete ${markerFile} (gates' floor reports then guard the fences: LEASE_FENCE_FLOOR_WAIT_MILLIS).`;
    super({ issues: [{ path: '', message }] });
    this.name = 'EventLogLostError';
    this.message = message;
    this.file = file;
    this.markerFile = markerFile;
    this.recordedLogId = recordedLogId;
    this.found = found;
  }
}

/** {@link EventLogLostError} of `file`: the one wording of this refusal, before open and in `migrate`. */
export const lostLogError = (file: string, recordedLogId: string, found: string): EventLogLostError =>
  new EventLogLostError(file, recordedLogId, found);
