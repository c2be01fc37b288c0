/**
 * Every SQLite error → EventLog port error mapping, in one table (etcd3's error-table idea).
 * Vendor errors never cross the port: corrupt or foreign files become
 * {@link EventLogCorruptError}, I/O, full disk and lock timeouts {@link EventLogUnavailableError};
 * anything else (a programming error) passes through unchanged.
 */
import { EventLogCorruptError, EventLogUnavailableError } from '@lease-fence/coordinator-core';

/** SQLite result-code prefixes that mean the file itself cannot be trusted. */
const CORRUPT_CODES = ['SQLITE_CORRUPT', 'SQLITE_NOTADB'];
/** SQLite result-code prefixes that mean the store failed, possibly transiently. */
const UNAVAILABLE_CODES = [
  'SQLITE_IOERR',
  'SQLITE_FULL',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_CANTOPEN',
  'SQLITE_READONLY',
  'SQLITE_PROTOCOL',
  'SQLITE_NOLFS',
];

const codeOf = (error: unknown): string | undefined => {
  const code: unknown = error instanceof Error ? (error as Error & { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
};

/**
 * Translates a better-sqlite3 error into the port's error for `operation`.
 * @returns the translated error, or `error` itself when it is not a store failure.
 */
export function toEventLogError(error: unknown, operation: string): unknown {
  const code = codeOf(error);
  if (code === undefined) return error;
  const message = `${operation}: ${(error as Error).message} (${code})`;
  if (CORRUPT_CODES.some((prefix) => code.startsWith(prefix))) {
    return new EventLogCorruptError({ issues: [{ path: '', message }], cause: error });
  }
  if (UNAVAILABLE_CODES.some((prefix) => code.startsWith(prefix))) {
    return new EventLogUnavailableError('sqlite', { message, cause: error });
  }
  return error;
}
