/**
 * A transactional SQL gate: the fence check, the raised floor and the refusal outbox live in the
 * resource's own database, in the same transaction as the write they guard, so the floor is
 * exactly as durable as the data it protects and no separate floor file can drift from it.
 *
 * @see docs/design.md § "The library's rules" (FenceGate; a resource restores its floor after its own restart)
 */
import {
  gateOptionsFrom,
  reconcileGateState,
  type DurableAdmitter,
  type FenceGateClient,
  type FenceTokenVerifier,
  type PendingRejection,
} from '@lease-fence/client';
import type Database from 'better-sqlite3';
import { AsyncLocalStorage } from 'node:async_hooks';
import { DoubleGrantError, FenceGate, requireId, StaleFenceError, type FenceToken, type GateFloor } from 'lease-fence';
import type { PoolClient } from 'pg';
import { postgresDriver, type PostgresPool } from './postgres-gate.js';
import type { LockedFloor, SqlGateDriver } from './sql-gate-driver.js';
import { sqliteDriver } from './sqlite-gate.js';

/** Options shared by {@link postgresFenceGate} and {@link sqliteFenceGate}. */
export interface SqlFenceGateOptions {
  /** The resource this gate guards: a token must have been granted on it. An id: 1 to 200 printable ASCII characters, no space at either end. */
  readonly resource: string;
  /**
   * Checks each signed token (signature against the coordinator's `/v1/keys`, resource,
   * namespace) before any statement runs: `@lease-fence/client`'s verifier.
   */
  readonly verifier: FenceTokenVerifier;
  /** Wall clock stamped on a refusal (epoch milliseconds, display only). @defaultValue Date.now */
  readonly wallClock?: () => number;
  /**
   * The coordinator, asked once per gate object before its first fenced transaction runs
   * (`new FenceGateClient({ baseUrl, token: gateToken })`, the drainer's client): the floor row is
   * raised to the latest fence granted on the resource and its `next_seq` above the last refusal
   * the coordinator recorded from this gate (`reconcileGateState`), so a database restored from a
   * backup, or whose gate tables were emptied, neither admits a token superseded since nor numbers
   * its refusals with seqs already recorded (their reports would be dropped as `seq-conflict`).
   * Until the coordinator answers, `fencedTransaction` throws what `gateRecovery` throws and runs
   * nothing. Without it the floor is only as recent as the database's own rows.
   */
  readonly coordinator?: GateRecoverySource;
}

/** What a gate reads from the coordinator before its first write: `FenceGateClient` has it. */
export type GateRecoverySource = Pick<FenceGateClient, 'gateRecovery'>;

/**
 * A resource guarded in its own database: run writes through {@link fencedTransaction}, create
 * its tables with {@link migrate}, drain its refusals with `drainSqlGate`.
 * @typeParam Tx - What the caller's statements run on: a `pg` `PoolClient` or a better-sqlite3 `Database`.
 */
export class SqlFenceGate<Tx> {
  /** The resource guarded. */
  readonly resource: string;
  /** The verifier of signed tokens (its `stats` count invalid tokens). */
  readonly verifier: FenceTokenVerifier;
  /** @internal The database behind the gate. */
  readonly driver: SqlGateDriver<Tx>;
  /** @internal */
  readonly wallClock: () => number;
  readonly #pendingListeners = new Set<() => void>();
  readonly #admitListeners = new Set<(token: FenceToken) => void>();
  /** `undefined` once reconciled (or when there is no coordinator to reconcile with). */
  #coordinator: GateRecoverySource | undefined;
  /** The reconciliation in flight, shared by the transactions waiting for it. */
  #reconciling: Promise<void> | undefined;

  /**
   * @internal Use {@link postgresFenceGate} or {@link sqliteFenceGate}.
   * @throws TypeError when `resource` is empty or `verifier` is missing; RangeError when `resource` is not an id (lease-fence's `requireId`: 1 to 200 printable ASCII characters).
   */
  constructor(driver: SqlGateDriver<Tx>, options: SqlFenceGateOptions, api: string) {
    // The coordinator's id rule: a resource no token can name would refuse every write as an invalid token.
    requireId(api, 'resource', options?.resource);
    if (typeof options.verifier?.verify !== 'function') {
      throw new TypeError(`${api}: verifier must be a FenceTokenVerifier from @lease-fence/client`);
    }
    if (options.wallClock !== undefined && typeof options.wallClock !== 'function') {
      throw new TypeError(`${api}: wallClock must be a function returning epoch milliseconds`);
    }
    if (options.coordinator !== undefined && typeof options.coordinator?.gateRecovery !== 'function') {
      throw new TypeError(`${api}: coordinator must be a FenceGateClient from @lease-fence/client (with gateRecovery)`);
    }
    this.resource = options.resource;
    this.verifier = options.verifier;
    this.driver = driver;
    this.wallClock = options.wallClock ?? Date.now;
    this.#coordinator = options.coordinator;
  }

  /**
   * @internal Resolves once the floor row was reconciled with the coordinator (at once when it
   * was, or when the gate has no `coordinator`); concurrent callers share one attempt, and a
   * failed attempt is made again by the next call.
   * @throws What `gateRecovery` or the database throws (nothing was changed).
   */
  reconciled(): Promise<void> | undefined {
    const coordinator = this.#coordinator;
    if (coordinator === undefined) return undefined;
    this.#reconciling ??= reconcileFloorRow(this, coordinator).then(
      () => {
        this.#coordinator = undefined;
      },
      (error: unknown) => {
        this.#reconciling = undefined;
        throw error;
      },
    );
    return this.#reconciling;
  }

  /**
   * Calls `listener` after a refusal of this gate object was committed (a drainer in the same
   * process then reports it at once; refusals committed by other processes are found by polling).
   * @returns A function that stops the calls.
   */
  onRefusalCommitted(listener: () => void): () => void {
    this.#pendingListeners.add(listener);
    return () => this.#pendingListeners.delete(listener);
  }

  /** @internal */
  refusalCommitted(): void {
    for (const listener of this.#pendingListeners) safely(listener);
  }

  /**
   * Calls `listener` with the token of each fenced transaction of this gate object that raised
   * the floor, once that transaction has committed (never for one that rolled back, nor for a
   * write at the floor's own fence). `drainSqlGate` passes these to `reportAdmits`, which tells
   * the coordinator when each handover's exposure ended. The listener runs after the commit, off
   * the transaction; it must not block, and what it throws is ignored.
   * @returns A function that stops the calls.
   */
  onFloorRaised(listener: (token: FenceToken) => void): () => void {
    this.#admitListeners.add(listener);
    return () => this.#admitListeners.delete(listener);
  }

  /** @internal */
  floorRaised(token: FenceToken): void {
    for (const listener of this.#admitListeners) safely(() => listener(token));
  }
}

/** The rule is FenceGate's, run on the locked row as it is now: one copy of the fencing check. */
const rowGate = <Tx>(resource: string, locked: LockedFloor<Tx>): FenceGate =>
  new FenceGate(resource, gateOptionsFrom({ resource, ...locked.row }));

/**
 * Admits `token` at `fenceGate` (the locked row's gate) and, when that raised the floor, writes
 * it into the row (durable with the transaction's commit).
 * @returns Whether the floor was raised.
 * @throws `StaleFenceError` / `DoubleGrantError` from the rule (nothing written).
 */
const raiseFloor = async <Tx>(fenceGate: FenceGate, locked: LockedFloor<Tx>, token: FenceToken): Promise<boolean> => {
  fenceGate.admit(token);
  const floor = fenceGate.floor;
  const raised = floor !== undefined && !sameFloor(floor, locked.row.floor);
  if (raised) await locked.saveFloor(floor);
  return raised;
};

/**
 * The SQL gate's side of fence-first handover: pass it to `openGateLink` of
 * `@lease-fence/client` (`guards: [sqlGateGuard(gate)]`). When the coordinator asks the link to
 * admit a reserved fence, the floor row is raised to it by the `FenceGate` rule in one locked
 * transaction (after the gate object's reconciliation, when it has a `coordinator`), and the link
 * answers `admitted` once that transaction committed. So right after the new holder's acquire
 * returns, every older token is refused by `fencedTransaction`, in every process writing to the
 * database, even before the new holder writes. A fence the rule refuses is not answered (the
 * coordinator burns it) and records nothing: it was not a write.
 * @example
 * ```ts
 * const link = openGateLink({ baseUrl, token: gateToken, guards: [sqlGateGuard(gate)] });
 * await link.whenGuarding();
 * ```
 */
export const sqlGateGuard = (gate: SqlFenceGate<unknown>): DurableAdmitter => {
  if (!(gate instanceof SqlFenceGate))
    throw new TypeError('sqlGateGuard: gate must come from postgresFenceGate or sqliteFenceGate');
  return {
    resource: gate.resource,
    admit: async (token) => {
      await gate.reconciled();
      await gate.driver.withLockedFloor(gate.resource, async (locked) => {
        await raiseFloor(rowGate(gate.resource, locked), locked, token);
      });
    },
  };
};

/**
 * Raises `gate`'s floor row to what the coordinator knows (`reconcileGateState`, the one copy of
 * the rule: each part the higher of the two, never lowered), in one locked transaction.
 */
const reconcileFloorRow = async <Tx>(gate: SqlFenceGate<Tx>, coordinator: GateRecoverySource): Promise<void> => {
  const view = await coordinator.gateRecovery(gate.resource);
  await gate.driver.withLockedFloor(gate.resource, async (locked) => {
    const state = reconcileGateState(gate.resource, { resource: gate.resource, ...locked.row }, view);
    if (state.floor !== undefined && !sameFloor(state.floor, locked.row.floor)) await locked.saveFloor(state.floor);
    if (state.nextSeq !== locked.row.nextSeq) await locked.saveNextSeq(state.nextSeq);
  });
};

const sameFloor = (a: GateFloor, b: GateFloor | undefined): boolean =>
  a.fence === b?.fence && a.holderId === b.holderId;

const safely = (fn: () => void): void => {
  try {
    fn();
  } catch {
    // a listener never changes the outcome of the transaction
  }
};

/** Options of {@link postgresFenceGate}. */
export interface PostgresFenceGateOptions extends SqlFenceGateOptions {
  /** A `pg` `Pool` of the database that holds the resource's data (and, after `migrate`, its floor and outbox). */
  readonly pool: PostgresPool;
  /**
   * How long a fenced transaction may sit idle between two statements (milliseconds) before
   * PostgreSQL ends its session and rolls it back (`SET LOCAL idle_in_transaction_session_timeout`,
   * sent with the `BEGIN`). It holds the floor row, so a writer stalled inside it (SIGSTOP, a frozen
   * VM, a callback awaiting a slow call) would hold up the next holder's writes for as long as it
   * stalls; with this bound the next holder's write waits at most this long and the stalled one
   * commits nothing ({@link IdleTransactionEndedError}). Longer than any pause your callbacks make
   * between statements; `0` turns the bound off (the next holder then waits for the stalled one).
   * An integer from 0 to 2 147 483 647. @defaultValue {@link DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MILLIS}
   */
  readonly idleInTransactionTimeoutMillis?: number;
}

/** The default {@link PostgresFenceGateOptions.idleInTransactionTimeoutMillis}: 10 s (milliseconds). */
export const DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MILLIS = 10_000;

/** PostgreSQL's largest timeout setting (an `int`, in milliseconds). */
const MAX_POSTGRES_TIMEOUT_MILLIS = 2_147_483_647;

/** Options of {@link sqliteFenceGate}. */
export interface SqliteFenceGateOptions extends SqlFenceGateOptions {
  /**
   * A better-sqlite3 connection to the database that holds the resource's data. Give the gate a
   * connection of its own: while a fenced transaction awaits your callback, other statements on
   * this connection would run inside it. WAL and `synchronous = FULL` make a commit survive a
   * power loss; the floor then does too.
   */
  readonly database: Database.Database;
}

/**
 * A gate on PostgreSQL: the floor row is locked with `SELECT … FOR UPDATE` in each fenced transaction.
 * @throws TypeError / RangeError on bad options, naming the field.
 * @example
 * ```ts
 * const gate = postgresFenceGate({ pool, resource: 'orders-db', verifier });
 * await migrate(gate);
 * await fencedTransaction(gate, signedToken, (tx) => tx.query('UPDATE orders SET state = $1 WHERE id = $2', ['shipped', 7]));
 * ```
 */
export const postgresFenceGate = (options: PostgresFenceGateOptions): SqlFenceGate<PoolClient> => {
  if (typeof options?.pool?.connect !== 'function') throw new TypeError('postgresFenceGate: pool must be a pg Pool');
  const idleMillis = options.idleInTransactionTimeoutMillis ?? DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MILLIS;
  if (!Number.isInteger(idleMillis) || idleMillis < 0 || idleMillis > MAX_POSTGRES_TIMEOUT_MILLIS) {
    throw new TypeError(
      `postgresFenceGate: idleInTransactionTimeoutMillis must be an integer from 0 (no bound) to ${String(MAX_POSTGRES_TIMEOUT_MILLIS)} milliseconds, got ${JSON.stringify(options.idleInTransactionTimeoutMillis)}`,
    );
  }
  return new SqlFenceGate(postgresDriver(options.pool, idleMillis), options, 'postgresFenceGate');
};

/**
 * A gate on SQLite: each fenced transaction is `BEGIN IMMEDIATE` (the database's write lock).
 * better-sqlite3 is an optional peer dependency: install it to use this gate (this package only
 * imports its types, so the PostgreSQL gate works without it).
 * @throws TypeError / RangeError on bad options, naming the field (`database`: naming the package to install).
 */
export const sqliteFenceGate = (options: SqliteFenceGateOptions): SqlFenceGate<Database.Database> => {
  const database = options?.database as Partial<Database.Database> | undefined;
  if (typeof database?.prepare !== 'function' || typeof database.exec !== 'function') {
    throw new TypeError(
      `sqliteFenceGate: database must be a better-sqlite3 Database, got ${database === null ? 'null' : typeof database}` +
        ' (better-sqlite3 is an optional peer dependency of @lease-fence/gate-sql: npm install better-sqlite3)',
    );
  }
  return new SqlFenceGate(sqliteDriver(options.database), options, 'sqliteFenceGate');
};

/**
 * Creates the gate's tables (`lease_fence_floors`, `lease_fence_outbox`) if they do not exist.
 * Explicit, idempotent, and safe to run from several processes at once. Nothing else creates them.
 * @throws What the database throws (e.g. no permission to create tables).
 */
export const migrate = (gate: SqlFenceGate<unknown>): Promise<void> => gate.driver.migrate();

/** A fenced transaction whose callback is running: `open` until its transaction ended. */
interface OpenFencedTransaction {
  readonly resource: string;
  open: boolean;
}

/**
 * The fenced transactions whose callbacks the current async context runs in. A fenced
 * transaction of the same resource started inside one would wait for the floor row its caller
 * holds (and, with a pool of one connection, for a connection): a deadlock, so it is refused.
 */
const enclosingTransactions = new AsyncLocalStorage<readonly OpenFencedTransaction[]>();

/**
 * Runs `work` as a fenced write to the gate's resource, in ONE database transaction:
 *
 * 1. verifies `signedToken` (signature, resource, namespace); an invalid token throws before any
 *    statement runs, so it changes nothing; then, on the gate object's first call, reconciles the
 *    floor row with its `coordinator` option (see {@link SqlFenceGateOptions.coordinator});
 * 2. begins a transaction and locks the resource's floor row;
 * 3. compares the token's fence with the floor by `lease-fence`'s `FenceGate` rule;
 * 4. admitted: raises the floor in the row, runs `work(tx)` on the same transaction, and commits
 *    both together. If `work` throws, both roll back: neither the data nor the raised floor stays;
 * 5. refused: writes the refusal (next seq) into `lease_fence_outbox`, commits that alone, and
 *    only then throws the gate's `StaleFenceError` / `DoubleGrantError`. `work` never runs.
 *
 * A process killed at any point commits nothing it had not committed: the database rolls the
 * open transaction back, the floor with it.
 *
 * @param gate - From {@link postgresFenceGate} or {@link sqliteFenceGate}, after {@link migrate}.
 * @param signedToken - The writer's `lease.signedToken`.
 * @param work - Your statements, on `tx` (the transaction's connection); what it returns is returned.
 * @throws `InvalidFenceTokenError` (nothing ran) / `SigningKeysUnavailableError` (retryable; nothing ran) from the verifier.
 * @throws What the `coordinator` option's `gateRecovery` throws, until it has answered once (retryable; nothing ran).
 * @throws `StaleFenceError` / `DoubleGrantError` once the refusal is committed in the outbox.
 * @throws What `work` throws (everything rolled back); what the database throws (nothing committed).
 * @throws TypeError when called inside `work` of a fenced transaction of the same resource (nothing ran).
 * @see docs/design.md § "The library's rules" (FenceGate)
 */
export const fencedTransaction = async <Tx, T>(
  gate: SqlFenceGate<Tx>,
  signedToken: string,
  work: (tx: Tx) => Promise<T> | T,
): Promise<T> => {
  if (!(gate instanceof SqlFenceGate))
    throw new TypeError('fencedTransaction: gate must come from postgresFenceGate or sqliteFenceGate');
  if (typeof work !== 'function') throw new TypeError('fencedTransaction: work must be a function (tx) => …');
  const enclosing = enclosingTransactions.getStore() ?? [];
  if (enclosing.some((outer) => outer.open && outer.resource === gate.resource)) {
    throw new TypeError(
      `fencedTransaction: called inside a fenced transaction of the same resource ${JSON.stringify(gate.resource)}, whose floor row it would wait for (a deadlock); run those statements on its tx`,
    );
  }
  const token = await gate.verifier.verify(signedToken, gate.resource);
  await gate.reconciled();
  const outcome = await gate.driver.withLockedFloor(gate.resource, async (locked) => {
    const fenceGate = rowGate(gate.resource, locked);
    let raised: boolean;
    try {
      raised = await raiseFloor(fenceGate, locked, token);
    } catch (error) {
      if (!(error instanceof StaleFenceError || error instanceof DoubleGrantError)) throw error;
      const refusal: PendingRejection = { ...error.rejection, wallMillis: gate.wallClock() };
      await locked.saveRefusal(refusal, fenceGate.nextSeq);
      return { refused: error };
    }
    const current: OpenFencedTransaction = { resource: gate.resource, open: true };
    try {
      return { value: await enclosingTransactions.run([...enclosing, current], () => work(locked.tx)), raised };
    } finally {
      // What the callback started and runs after the transaction ended is not nested in it.
      current.open = false;
    }
  });
  if ('refused' in outcome) {
    gate.refusalCommitted();
    throw outcome.refused;
  }
  // Committed: the raised floor is as durable as the data, so the admit may be reported.
  if (outcome.raised) gate.floorRaised(token);
  return outcome.value;
};
