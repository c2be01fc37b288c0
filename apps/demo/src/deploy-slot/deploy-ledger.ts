/**
 * The deploy slot's own database (SQLite), and the example of keeping a gate's floor IN THE SAME
 * TRANSACTION as the write it admits: the deployment row and the raised floor commit together
 * or not at all, so after any crash the durable floor covers every durable write. (A resource
 * without a transactional store uses `openFileFloorStore` + `commitDurably` from the SDK instead.)
 *
 * better-sqlite3 is synchronous, so `gate.commit(token, () => transaction())` is one synchronous
 * step: check the fence, raise the floor, write the row and the floor, commit.
 *
 * The same database is the gate's outbox: a refusal's full record and the raised rejection seq
 * are one transaction ({@link DeployLedger.recordRefusal}, run from the gate's `onRejection`,
 * before the refusal is thrown to the writer), and stay until the coordinator acknowledged them
 * ({@link DeployLedger.outbox}, drained by the SDK's `reportRejections`).
 *
 * @see docs/design.md § "The library's rules" (A resource restores its floor after its own restart)
 */
import Database from 'better-sqlite3';
import type { FloorStore, GateState, PendingRejection, RejectionOutbox } from '@lease-fence/client';
import type { FenceGate, FenceToken, RejectionRecord } from 'lease-fence';

/** A deployment step the slot accepted. */
export interface Deployment {
  readonly id: number;
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  readonly step: string;
  /** Epoch milliseconds (display only). */
  readonly wallMillis: number;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS gate_state (
    resource TEXT PRIMARY KEY,
    floor_fence INTEGER,
    floor_holder_id TEXT,
    next_seq INTEGER NOT NULL,
    reported_through_seq INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS deployments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    resource TEXT NOT NULL,
    holder_id TEXT NOT NULL,
    fence INTEGER NOT NULL,
    step TEXT NOT NULL,
    wall_millis INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS gate_outbox (
    resource TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    rejected_holder_id TEXT NOT NULL,
    rejected_fence INTEGER NOT NULL,
    current_holder_id TEXT NOT NULL,
    current_fence INTEGER NOT NULL,
    wall_millis INTEGER NOT NULL,
    PRIMARY KEY (resource, seq)
  );
`;

/** Upserts a gate's state, never lowering any part of it (a late writer cannot undo a raise). */
const UPSERT_GATE_STATE = `
  INSERT INTO gate_state (resource, floor_fence, floor_holder_id, next_seq, reported_through_seq)
  VALUES (@resource, @floorFence, @floorHolderId, @nextSeq, @reportedThroughSeq)
  ON CONFLICT (resource) DO UPDATE SET
    floor_holder_id = CASE WHEN excluded.floor_fence > coalesce(floor_fence, 0) THEN excluded.floor_holder_id ELSE floor_holder_id END,
    floor_fence = max(coalesce(floor_fence, 0), coalesce(excluded.floor_fence, 0)),
    next_seq = max(next_seq, excluded.next_seq),
    reported_through_seq = max(reported_through_seq, excluded.reported_through_seq)
`;

interface GateStateRow {
  resource: string;
  floor_fence: number | null;
  floor_holder_id: string | null;
  next_seq: number;
  reported_through_seq: number;
}

interface OutboxRow {
  seq: number;
  kind: 'stale' | 'double-grant';
  rejected_holder_id: string;
  rejected_fence: number;
  current_holder_id: string;
  current_fence: number;
  wall_millis: number;
}

/** The deploy slot's SQLite database: deployments, each gate's durable state, and each gate's outbox of refusals. */
export class DeployLedger {
  readonly #db: Database.Database;
  readonly #insertRefusal: Database.Statement;
  readonly #selectOutbox: Database.Statement;
  readonly #deleteAcknowledged: Database.Statement;
  readonly #outboxListeners = new Map<string, Set<() => void>>();
  readonly #upsertGateState: Database.Statement;
  readonly #insertDeployment: Database.Statement;
  readonly #selectGateState: Database.Statement;
  readonly #countDeployments: Database.Statement;

  /**
   * Opens (and creates) the database at `path`, in WAL mode with `synchronous = FULL`: a
   * committed transaction survives a crash of the process or the machine.
   */
  constructor(path: string) {
    this.#db = new Database(path);
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = FULL');
    this.#db.exec(SCHEMA);
    this.#upsertGateState = this.#db.prepare(UPSERT_GATE_STATE);
    this.#insertDeployment = this.#db.prepare(
      'INSERT INTO deployments (resource, holder_id, fence, step, wall_millis) VALUES (@resource, @holderId, @fence, @step, @wallMillis)',
    );
    this.#selectGateState = this.#db.prepare('SELECT * FROM gate_state WHERE resource = ?');
    this.#countDeployments = this.#db.prepare('SELECT count(*) AS count FROM deployments WHERE resource = ?');
    this.#insertRefusal = this.#db.prepare(
      `INSERT INTO gate_outbox (resource, seq, kind, rejected_holder_id, rejected_fence, current_holder_id, current_fence, wall_millis)
       VALUES (@resource, @seq, @kind, @rejectedHolderId, @rejectedFence, @currentHolderId, @currentFence, @wallMillis)`,
    );
    this.#selectOutbox = this.#db.prepare(
      `SELECT o.* FROM gate_outbox o JOIN gate_state g ON g.resource = o.resource
       WHERE o.resource = ? AND o.seq > g.reported_through_seq ORDER BY o.seq`,
    );
    this.#deleteAcknowledged = this.#db.prepare('DELETE FROM gate_outbox WHERE resource = ? AND seq <= ?');
  }

  /** The saved state of `resource`'s gate, for `gateOptionsFrom`; `undefined` before the first save. */
  gateState(resource: string): GateState | undefined {
    const row = this.#selectGateState.get(resource) as GateStateRow | undefined;
    if (row === undefined) return undefined;
    return {
      resource,
      ...(row.floor_fence === null || row.floor_holder_id === null
        ? {}
        : { floor: { fence: row.floor_fence, holderId: row.floor_holder_id } }),
      nextSeq: row.next_seq,
      reportedThroughSeq: row.reported_through_seq,
      outbox: this.#pending(resource),
    };
  }

  /**
   * The fenced write: `gate` checks `token` and raises its floor, then the deployment row and the
   * new floor are written in ONE transaction.
   * @throws `StaleFenceError` / `DoubleGrantError` from the gate: nothing was written (with a gate
   *   whose `onRejection` is {@link DeployLedger.recordRefusal}, the refusal is durable in the outbox).
   * @throws what `onRejection` threw, when it threw: the refusal is then not durable, so the
   *   writer gets the storage error instead of a refusal nobody will ever see reported.
   */
  deploy(gate: FenceGate, token: FenceToken, step: string, wallMillis: number): Deployment {
    try {
      return gate.commit(token, () =>
        this.#db.transaction((): Deployment => {
          this.#saveGateState(gate.resource, gate.floor, gate.nextSeq, 0);
          const { lastInsertRowid } = this.#insertDeployment.run({
            resource: token.resource,
            holderId: token.holderId,
            fence: token.fence,
            step,
            wallMillis,
          });
          return {
            id: Number(lastInsertRowid),
            resource: token.resource,
            holderId: token.holderId,
            fence: token.fence,
            step,
            wallMillis,
          };
        })(),
      );
    } catch (error) {
      const notDurable = (error as { onRejectionError?: unknown }).onRejectionError;
      throw notDurable ?? error;
    }
  }

  /**
   * Makes a refusal durable: its full record in the outbox and the raised rejection seq, in one
   * transaction. Call it from the gate's `onRejection`, which runs before the refusal is thrown,
   * so the writer is only told of a durable refusal.
   * @throws what SQLite throws (nothing saved; the gate puts it on the thrown refusal's `onRejectionError`).
   */
  recordRefusal(rejection: RejectionRecord, wallMillis: number): void {
    this.#db.transaction(() => {
      this.#insertRefusal.run({
        resource: rejection.resource,
        seq: rejection.seq,
        kind: rejection.kind,
        rejectedHolderId: rejection.rejected.holderId,
        rejectedFence: rejection.rejected.fence,
        currentHolderId: rejection.current.holderId,
        currentFence: rejection.current.fence,
        wallMillis,
      });
      this.#saveGateState(rejection.resource, undefined, rejection.seq + 1, 0);
    })();
    for (const listener of this.#outboxListeners.get(rejection.resource) ?? []) listener();
  }

  /** `resource`'s outbox, for the SDK's `reportRejections`: refusals not yet acknowledged, seq ascending. */
  outbox(resource: string): RejectionOutbox {
    const reportedThroughSeq = (): number => this.gateState(resource)?.reportedThroughSeq ?? 0;
    return {
      resource,
      get reportedThroughSeq() {
        return reportedThroughSeq();
      },
      pendingRejections: () => this.#pending(resource),
      acknowledgeRejections: async (throughSeq) => {
        if (!Number.isSafeInteger(throughSeq) || throughSeq < 0) {
          throw new RangeError(
            `DeployLedger.outbox.acknowledgeRejections: throughSeq must be an integer ≥ 0, got ${String(throughSeq)}`,
          );
        }
        this.#db.transaction(() => {
          this.#saveGateState(resource, undefined, 1, throughSeq);
          this.#deleteAcknowledged.run(resource, throughSeq);
        })();
      },
      onPending: (listener) => {
        const listeners = this.#outboxListeners.get(resource) ?? new Set();
        this.#outboxListeners.set(resource, listeners.add(listener));
        return () => listeners.delete(listener);
      },
    };
  }

  /**
   * `resource`'s gate state as a {@link FloorStore}, for the SDK's gate link: a fence admitted
   * over the link (fence-first handover) is saved here, in the slot's own database, before the
   * coordinator is told, so it is as durable as a floor raised by a write. Saves merge upwards
   * (the floor never goes down) and leave the outbox as it is.
   */
  floorStore(resource: string): FloorStore {
    return {
      load: async () => this.gateState(resource),
      save: async (state) => {
        if (state.resource !== resource)
          throw new TypeError(
            `DeployLedger.floorStore(${JSON.stringify(resource)}).save: state.resource is ${JSON.stringify(state.resource)}`,
          );
        this.#saveGateState(resource, state.floor, state.nextSeq, state.reportedThroughSeq);
      },
    };
  }

  /** Persists a gate's rejection counter or report progress (no write involved). */
  saveProgress(resource: string, progress: { readonly nextSeq?: number; readonly reportedThroughSeq?: number }): void {
    this.#saveGateState(resource, undefined, progress.nextSeq ?? 1, progress.reportedThroughSeq ?? 0);
  }

  /** How many deployment steps `resource` accepted. */
  deploymentCount(resource: string): number {
    return (this.#countDeployments.get(resource) as { count: number }).count;
  }

  #pending(resource: string): PendingRejection[] {
    return (this.#selectOutbox.all(resource) as OutboxRow[]).map((row) => ({
      seq: row.seq,
      resource,
      kind: row.kind,
      rejected: { holderId: row.rejected_holder_id, fence: row.rejected_fence },
      current: { holderId: row.current_holder_id, fence: row.current_fence },
      wallMillis: row.wall_millis,
    }));
  }

  /** Closes the database. */
  close(): void {
    this.#db.close();
  }

  #saveGateState(
    resource: string,
    floor: { fence: number; holderId: string } | undefined,
    nextSeq: number,
    reportedThroughSeq: number,
  ): void {
    this.#upsertGateState.run({
      resource,
      floorFence: floor?.fence ?? null,
      floorHolderId: floor?.holderId ?? null,
      nextSeq,
      reportedThroughSeq,
    });
  }
}
