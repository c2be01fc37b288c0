/**
 * The append rule of the SQLite log, run inside the write transaction by whichever connection
 * writes: the expected-version check, then one row per event at the positions after it.
 *
 * One function for both writers: the inline writer calls it on the opening connection, and the
 * writer thread (`writer-thread.ts`) evaluates its source (`Function.prototype.toString`) and
 * calls it on its own connection. So it must stay self-contained: no imports, no closures, plain
 * JavaScript once compiled.
 */
import type { EncodedEvent } from '@lease-fence/coordinator-core';

/** The two statements the rule runs (see `statements.ts`; the writer thread prepares the same SQL). */
export interface AppendStatements {
  /** The log's version: the highest position, 0 when empty. */
  readonly version: { get(): number | undefined };
  readonly insertEvent: {
    run(position: number, type: string, version: number, data: string, recordedAt: number): unknown;
  };
}

/**
 * What an append did: `toPosition` (the new version) when `expectedVersion` was the version, else
 * `conflict` with the version found (nothing inserted; the caller throws
 * `ExpectedVersionConflictError`).
 */
export type AppendRowsResult =
  | { readonly conflict: false; readonly toPosition: number }
  | { readonly conflict: true; readonly actualVersion: number };

/**
 * Inserts `rows` at `expectedVersion + 1 …` if the log's version is `expectedVersion`.
 * @param recordedAt - wall clock of the append (epoch milliseconds, display only).
 * @throws whatever the statements throw (better-sqlite3's `SqliteError`); the caller's
 *   transaction rolls back.
 */
export function appendRows(
  statements: AppendStatements,
  rows: readonly EncodedEvent[],
  expectedVersion: number,
  recordedAt: number,
): AppendRowsResult {
  const actualVersion = statements.version.get() ?? 0;
  if (actualVersion !== expectedVersion) return { conflict: true, actualVersion };
  let position = actualVersion;
  for (let index = 0; index < rows.length; index += 1) {
    const row = rows[index]!;
    position += 1;
    statements.insertEvent.run(position, row.type, row.version, row.data, recordedAt);
  }
  return { conflict: false, toPosition: position };
}

/** The two statements a snapshot save runs (see `statements.ts`). */
export interface SnapshotStatements {
  readonly saveSnapshot: {
    run(position: number, schemaVersion: number, state: string, savedAt: number): unknown;
  };
  /** Keeps the newest `keep` snapshots. */
  readonly pruneSnapshots: { run(keep: number): unknown };
}

/**
 * Saves one snapshot row and prunes all but the newest `kept`, inside the caller's transaction.
 * Self-contained for the writer thread, as {@link appendRows}.
 * @param savedAt - wall clock (epoch milliseconds, display only).
 */
export function saveSnapshotRow(
  statements: SnapshotStatements,
  position: number,
  schemaVersion: number,
  state: string,
  savedAt: number,
  kept: number,
): void {
  statements.saveSnapshot.run(position, schemaVersion, state, savedAt);
  statements.pruneSnapshots.run(kept);
}
