/**
 * The port between the fencing logic of this package ({@link fencedTransaction}, the outbox) and
 * a database: what a transactional SQL gate needs from PostgreSQL or SQLite, and nothing else.
 * The fencing rule is not here: it stays in `lease-fence`'s `FenceGate`, which
 * `fenced-transaction.ts` runs against the row this port locks.
 *
 * Two tables, created by `migrate()`:
 * - `lease_fence_floors`: one row per resource: the floor (`floor_fence`, `floor_holder_id`, NULL
 *   before the first admission), the seq the next refusal gets (`next_seq`, from 1) and how far
 *   the coordinator acknowledged refusals (`reported_through_seq`, from 0);
 * - `lease_fence_outbox`: refusals not yet acknowledged, keyed by (resource, seq).
 *
 * @see docs/design.md § "The library's rules" (A resource restores its floor after its own restart)
 */
import type { PendingRejection } from '@lease-fence/client';
import type { GateFloor } from 'lease-fence';

/** The durable part of one resource's gate, as its floor row holds it. */
export interface FloorRow {
  /** The highest fence admitted and its holder; absent before the first admission. */
  readonly floor?: GateFloor;
  /** The seq the next refusal gets. Integer ≥ 1. */
  readonly nextSeq: number;
  /** Refusals with seq at or below this were acknowledged by the coordinator. Integer ≥ 0. */
  readonly reportedThroughSeq: number;
}

/**
 * How many outbox rows one read returns: the drainer reports them in seq order, one at a time,
 * so it needs the head of the outbox, and a backlog piled up during a long coordinator outage
 * must not make every poll read (and hold in memory) all of it.
 * @internal
 */
export const OUTBOX_PAGE_ROWS = 1000;

/** A resource's floor row and its outbox, read without a lock (for the drainer). */
export interface GateRowState extends FloorRow {
  /** The first {@link OUTBOX_PAGE_ROWS} refusals not yet acknowledged, seq ascending. */
  readonly outbox: readonly PendingRejection[];
}

/**
 * One open database transaction in which the resource's floor row is locked: no other
 * transaction can read it for update, change it, or commit a fenced write of the same resource
 * until this one ends.
 * @typeParam Tx - What the caller's statements run on (a `pg` `PoolClient`, a better-sqlite3 `Database`).
 */
export interface LockedFloor<Tx> {
  /** The connection in the transaction, handed to the caller's callback. */
  readonly tx: Tx;
  /** The locked row (created with no floor, seq 1, when the resource has none yet). */
  readonly row: FloorRow;
  /**
   * Writes the raised floor into the locked row, in this transaction: at once, or (PostgreSQL)
   * together with its COMMIT, so it is durable exactly when the caller's statements are.
   */
  saveFloor(floor: GateFloor): Promise<void>;
  /** Writes a refusal into the outbox and `nextSeq` (its seq + 1) into the locked row. */
  saveRefusal(refusal: PendingRejection, nextSeq: number): Promise<void>;
  /** Writes `nextSeq` into the locked row, in this transaction (a reconciliation raising it). */
  saveNextSeq(nextSeq: number): Promise<void>;
}

/**
 * A database a transactional gate runs on. Implemented by `postgres-gate.ts` and
 * `sqlite-gate.ts`; every statement of this package is in those two files (the DDL, {@link schemaSql}, here).
 * @typeParam Tx - What the caller's statements run on.
 */
export interface SqlGateDriver<Tx> {
  /** Which SQL the driver speaks (for messages and tests). */
  readonly dialect: 'postgres' | 'sqlite';
  /** Creates the two tables if they do not exist. Idempotent; safe to run from several processes at once. */
  migrate(): Promise<void>;
  /**
   * Begins a transaction, locks (creating it if needed) `resource`'s floor row, runs `body`,
   * and commits what `body` did when it returns. When `body` throws (or the commit fails) it
   * rolls everything back and rethrows: nothing of it is durable.
   * @throws What the database throws (e.g. a missing table: run `migrate()` first); what `body` throws.
   */
  withLockedFloor<T>(resource: string, body: (locked: LockedFloor<Tx>) => Promise<T>): Promise<T>;
  /** Reads `resource`'s floor row and the head of its outbox, without a lock; `undefined` when it has no row yet. */
  readState(resource: string): Promise<GateRowState | undefined>;
  /**
   * Records that the coordinator acknowledged `resource`'s refusals through `throughSeq`: raises
   * `reported_through_seq` (never lowers it) and deletes those outbox rows, in one transaction.
   */
  acknowledge(resource: string, throughSeq: number): Promise<void>;
}

/**
 * Turns a stored integer (pg returns BIGINT as a string) into a safe integer, or throws naming
 * the column: a value no gate wrote means the table was edited by hand.
 * @internal
 */
export const toCount = (column: string, value: unknown, minimum: number): number => {
  const number = typeof value === 'string' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < minimum) {
    throw new RangeError(
      `lease-fence gate-sql: column ${column} must hold an integer ≥ ${minimum}, got ${JSON.stringify(value)}`,
    );
  }
  return number;
};

/** The raw columns of a floor row, as both drivers select them. @internal */
export interface FloorColumns {
  readonly floor_fence: unknown;
  readonly floor_holder_id: string | null;
  readonly next_seq: unknown;
  readonly reported_through_seq: unknown;
}

/** The raw columns of an outbox row, as both drivers select them. @internal */
export interface OutboxColumns {
  readonly seq: unknown;
  readonly kind: string;
  readonly rejected_holder_id: string;
  readonly rejected_fence: unknown;
  readonly current_holder_id: string;
  readonly current_fence: unknown;
  readonly wall_millis: unknown;
}

/** A floor row's columns as a {@link FloorRow}. @internal */
export const floorRowOf = (row: FloorColumns): FloorRow => ({
  ...(row.floor_fence === null || row.floor_holder_id === null
    ? {}
    : {
        floor: { fence: toCount('lease_fence_floors.floor_fence', row.floor_fence, 1), holderId: row.floor_holder_id },
      }),
  nextSeq: toCount('lease_fence_floors.next_seq', row.next_seq, 1),
  reportedThroughSeq: toCount('lease_fence_floors.reported_through_seq', row.reported_through_seq, 0),
});

/** An outbox row's columns as a {@link PendingRejection}. @internal */
export const refusalOf = (resource: string, row: OutboxColumns): PendingRejection => {
  if (row.kind !== 'stale' && row.kind !== 'double-grant') {
    throw new RangeError(
      `lease-fence gate-sql: column lease_fence_outbox.kind must be 'stale' or 'double-grant', got ${JSON.stringify(row.kind)}`,
    );
  }
  return {
    seq: toCount('lease_fence_outbox.seq', row.seq, 1),
    resource,
    kind: row.kind,
    rejected: {
      holderId: row.rejected_holder_id,
      fence: toCount('lease_fence_outbox.rejected_fence', row.rejected_fence, 1),
    },
    current: {
      holderId: row.current_holder_id,
      fence: toCount('lease_fence_outbox.current_fence', row.current_fence, 1),
    },
    wallMillis: toCount('lease_fence_outbox.wall_millis', row.wall_millis, 0),
  };
};

/** The columns an outbox insert binds, in the drivers' order. @internal */
export const refusalColumns = (refusal: PendingRejection): readonly (string | number)[] => [
  refusal.resource,
  refusal.seq,
  refusal.kind,
  refusal.rejected.holderId,
  refusal.rejected.fence,
  refusal.current.holderId,
  refusal.current.fence,
  refusal.wallMillis,
];

/**
 * The two tables' DDL in either dialect: PostgreSQL's BIGINT or SQLite's INTEGER (both hold any
 * safe integer); everything else is the same SQL.
 * @internal
 */
export const schemaSql = (integer: 'BIGINT' | 'INTEGER'): string => `
  CREATE TABLE IF NOT EXISTS lease_fence_floors (
    resource TEXT PRIMARY KEY,
    floor_fence ${integer} CHECK (floor_fence >= 1),
    floor_holder_id TEXT,
    next_seq ${integer} NOT NULL DEFAULT 1 CHECK (next_seq >= 1),
    reported_through_seq ${integer} NOT NULL DEFAULT 0 CHECK (reported_through_seq >= 0),
    CHECK ((floor_fence IS NULL) = (floor_holder_id IS NULL))
  );
  CREATE TABLE IF NOT EXISTS lease_fence_outbox (
    resource TEXT NOT NULL,
    seq ${integer} NOT NULL CHECK (seq >= 1),
    kind TEXT NOT NULL CHECK (kind IN ('stale', 'double-grant')),
    rejected_holder_id TEXT NOT NULL,
    rejected_fence ${integer} NOT NULL,
    current_holder_id TEXT NOT NULL,
    current_fence ${integer} NOT NULL,
    wall_millis ${integer} NOT NULL,
    PRIMARY KEY (resource, seq)
  );
`;
