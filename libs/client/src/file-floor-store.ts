/**
 * A {@link FloorStore} and {@link RejectionOutbox} in one small JSON file, replaced atomically:
 * write a temporary file in the same directory, fsync it, rename it over the old file, fsync the
 * directory. A crash at any point leaves either the old state or the new one, never a torn file
 * and never no file. The floor, `nextSeq` and the outbox of unacknowledged refusals are in the
 * same file, so a refusal and its seq become durable in one atomic step.
 *
 * Why a file and not SQLite: the SDK stays free of native dependencies (better-sqlite3 compiles
 * from source), and the state is small: a floor and the refusals not yet acknowledged, which the
 * reporter drains. The cost is one rewrite (and two fsyncs) of the whole file per save, so an
 * outbox that grows during a long coordinator outage makes each save proportionally larger.
 * A resource with its own transactional database should keep the state there instead, in the
 * write's transaction (`@lease-fence/gate-sql` does, in PostgreSQL or SQLite).
 *
 * @see docs/design.md § "The library's rules" (A resource restores its floor after its own restart)
 */
import { randomUUID } from 'node:crypto';
import { open, readFile, readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isIntegerInRange, requireCount } from 'lease-fence';
import { FloorStoreCorruptError } from './errors.js';
import {
  mergeGateStates,
  type FloorStore,
  type GateState,
  type PendingRejection,
  type RejectionOutbox,
} from './floor-store.js';

/** Options of {@link openFileFloorStore}. */
export interface FileFloorStoreOptions {
  /** The state file. Its directory must exist; temporary files are created beside it. */
  readonly path: string;
  /** The gate's resource: `load` refuses a file of another resource. */
  readonly resource: string;
  /**
   * Runs after the temporary file is durable and before the rename: a fault-injection point.
   * @internal for crash tests.
   */
  readonly beforeRename?: (tempPath: string) => Promise<void> | void;
}

/** The file's shape, version 2 (version 1 had no `outbox`, and is read as an empty one). */
interface FileContent {
  readonly version: 2;
  readonly resource: string;
  readonly floor: { readonly fence: number; readonly holderId: string } | null;
  readonly nextSeq: number;
  readonly reportedThroughSeq: number;
  readonly outbox: readonly PendingRejection[];
}

/**
 * Opens the floor store at `options.path` and removes temporary files a crash left beside it
 * (they never hold the current state: the rename is the commit point).
 *
 * @throws TypeError when `path` or `resource` is empty.
 * @example
 * ```ts
 * const store = await openFileFloorStore({ path: 'data/deploy-slot-a.floor.json', resource: 'deploy-slot-a' });
 * const gate = new FenceGate('deploy-slot-a', gateOptionsFrom(await store.load()));
 * await commitDurably(gate, store, lease.token, () => deploy());
 * ```
 */
export const openFileFloorStore = async (options: FileFloorStoreOptions): Promise<FileFloorStore> => {
  if (typeof options.path !== 'string' || options.path.length === 0) {
    throw new TypeError(`openFileFloorStore: path must be a non-empty string, got ${JSON.stringify(options.path)}`);
  }
  if (typeof options.resource !== 'string' || options.resource.length === 0) {
    throw new TypeError(
      `openFileFloorStore: resource must be a non-empty string, got ${JSON.stringify(options.resource)}`,
    );
  }
  const prefix = `${basename(options.path)}.`;
  const directory = dirname(options.path);
  for (const name of await readdir(directory)) {
    if (name.startsWith(prefix) && name.endsWith('.tmp')) await unlink(join(directory, name)).catch(() => undefined);
  }
  return new FileFloorStore(options);
};

/**
 * See {@link openFileFloorStore}. Saves are serialised and merged, so a floor never goes down and
 * a refusal is never dropped before it is acknowledged.
 */
export class FileFloorStore implements FloorStore, RejectionOutbox {
  /** The state file. */
  readonly path: string;
  /** The gate's resource. */
  readonly resource: string;
  readonly #beforeRename: FileFloorStoreOptions['beforeRename'];
  /** Everything saved or loaded so far, merged: what the next write writes. */
  #latest: GateState | undefined;
  /** What the last completed write (or the load) put on disk: what is durable. */
  #durable: GateState | undefined;
  #loaded: Promise<void> | undefined;
  #queued: Promise<void> | undefined;
  #tail: Promise<void> = Promise.resolve();
  readonly #listeners = new Set<() => void>();

  /** @internal use {@link openFileFloorStore}. */
  constructor(options: FileFloorStoreOptions) {
    this.path = options.path;
    this.resource = options.resource;
    this.#beforeRename = options.beforeRename;
  }

  /**
   * Reads the state file.
   * @returns The saved state with its `outbox`, or `undefined` when the file does not exist.
   * @throws {@link FloorStoreCorruptError} when it is not a version-1 or version-2 state of this resource.
   */
  async load(): Promise<GateState | undefined> {
    const state = await this.#read();
    if (state !== undefined) {
      this.#latest = mergeGateStates(this.#latest, state);
      this.#durable = mergeGateStates(this.#durable, state);
    }
    this.#loaded ??= Promise.resolve();
    return state;
  }

  /**
   * Makes `state` (merged with everything saved before, and with the file if it was not loaded
   * yet) durable in one atomic write. Concurrent saves share one write when they can; each
   * resolves after a write that includes it. A state that adds nothing to what is already
   * durable (same floor, seqs and outbox, or lower ones) resolves at once and writes nothing.
   * @throws TypeError when `state.resource` is another resource; {@link FloorStoreCorruptError}
   *   when the file was never loaded and is corrupt; what the file system throws.
   */
  save(state: GateState): Promise<void> {
    if (state.resource !== this.resource) {
      throw new TypeError(
        `FileFloorStore.save: state.resource must be ${JSON.stringify(this.resource)}, got ${JSON.stringify(state.resource)}`,
      );
    }
    this.#latest = mergeGateStates(this.#latest, state);
    // Nothing to write when `state` adds nothing to what is already on disk (a writer admitted
    // again at the floor's own fence): it is durable now. Each admitted write would otherwise
    // cost a file rewrite and two fsyncs.
    if (this.#durable !== undefined && sameGateState(mergeGateStates(this.#durable, state), this.#durable))
      return Promise.resolve();
    if (this.#queued === undefined) {
      const write = this.#tail.then(async () => {
        // A save before any load must not overwrite a floor or refusals already on disk.
        this.#loaded ??= this.load().then(() => undefined);
        await this.#loaded;
        this.#queued = undefined;
        const written = this.#latest as GateState;
        await this.#write(written);
        const before = this.#durable?.outbox?.at(-1)?.seq ?? 0;
        this.#durable = written;
        if ((written.outbox?.at(-1)?.seq ?? 0) > before) for (const listener of this.#listeners) safely(listener);
      });
      this.#queued = write;
      this.#tail = write.catch(() => undefined);
    }
    return this.#queued;
  }

  /** Every refusal with `seq` at or below this is acknowledged, durably. */
  get reportedThroughSeq(): number {
    return this.#durable?.reportedThroughSeq ?? 0;
  }

  /** The durable outbox: refusals saved and not yet acknowledged, seq ascending. */
  pendingRejections(): readonly PendingRejection[] {
    return this.#durable?.outbox ?? [];
  }

  /**
   * Saves `reportedThroughSeq = throughSeq`, which drops those refusals from the outbox.
   * @throws TypeError / RangeError (lease-fence's `requireCount`) when `throughSeq` is not a non-negative safe integer; what {@link FileFloorStore.save} throws.
   */
  async acknowledgeRejections(throughSeq: number): Promise<void> {
    requireCount('FileFloorStore.acknowledgeRejections', 'throughSeq', throughSeq);
    const latest = this.#latest;
    if (latest === undefined || throughSeq <= latest.reportedThroughSeq) return;
    await this.save({
      resource: this.resource,
      nextSeq: Math.max(latest.nextSeq, throughSeq + 1),
      reportedThroughSeq: throughSeq,
    });
  }

  /** Calls `listener` after each write that made new refusals durable. @returns a function that stops the calls. */
  onPending(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async #read(): Promise<GateState | undefined> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    return this.#parse(text);
  }

  async #write(state: GateState): Promise<void> {
    const content: FileContent = {
      version: 2,
      resource: state.resource,
      floor: state.floor === undefined ? null : { fence: state.floor.fence, holderId: state.floor.holderId },
      nextSeq: state.nextSeq,
      reportedThroughSeq: state.reportedThroughSeq,
      outbox: state.outbox ?? [],
    };
    const tempPath = `${this.path}.${process.pid}.${randomUUID()}.tmp`;
    const file = await open(tempPath, 'wx', 0o600);
    // A temporary file whose write, sync or rename failed is removed at once: on a full disk
    // (ENOSPC, EFBIG) it holds the bytes it got, the space the next save needs.
    try {
      try {
        await file.writeFile(`${JSON.stringify(content)}\n`, 'utf8');
        await file.sync();
      } finally {
        await file.close();
      }
      await this.#beforeRename?.(tempPath);
      await rename(tempPath, this.path);
    } catch (error) {
      await unlink(tempPath).catch(() => undefined);
      throw error;
    }
    const directory = await open(dirname(this.path), 'r');
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
  }

  #parse(text: string): GateState {
    const corrupt = (problem: string, cause?: unknown): never => {
      throw new FloorStoreCorruptError(this.path, problem, cause === undefined ? undefined : { cause });
    };
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (cause) {
      return corrupt('not JSON', cause);
    }
    if (typeof value !== 'object' || value === null) return corrupt('not an object');
    const content = value as Partial<Record<keyof FileContent, unknown>>;
    if (content.version !== 1 && content.version !== 2)
      return corrupt(`unknown version ${JSON.stringify(content.version)}`);
    if (content.resource !== this.resource)
      return corrupt(`holds resource ${JSON.stringify(content.resource)}, not ${JSON.stringify(this.resource)}`);
    const { nextSeq, reportedThroughSeq } = content;
    if (!isIntegerInRange(nextSeq, 1)) return corrupt(`nextSeq must be an integer ≥ 1, got ${JSON.stringify(nextSeq)}`);
    if (!isIntegerInRange(reportedThroughSeq, 0))
      return corrupt(`reportedThroughSeq must be an integer ≥ 0, got ${JSON.stringify(reportedThroughSeq)}`);
    const outbox = content.version === 1 ? [] : this.#parseOutbox(content.outbox, nextSeq, reportedThroughSeq, corrupt);
    const { floor } = content;
    if (floor === null) return { resource: this.resource, nextSeq, reportedThroughSeq, outbox };
    if (typeof floor !== 'object' || floor === undefined) return corrupt('floor must be an object or null');
    const { fence, holderId } = floor as { fence?: unknown; holderId?: unknown };
    if (!isIntegerInRange(fence, 1))
      return corrupt(`floor.fence must be a positive integer, got ${JSON.stringify(fence)}`);
    if (!isId(holderId)) return corrupt('floor.holderId must be a non-empty string');
    return { resource: this.resource, floor: { fence, holderId }, nextSeq, reportedThroughSeq, outbox };
  }

  #parseOutbox(
    value: unknown,
    nextSeq: number,
    reportedThroughSeq: number,
    corrupt: (problem: string) => never,
  ): PendingRejection[] {
    if (!Array.isArray(value)) return corrupt('outbox must be an array');
    let previousSeq = reportedThroughSeq;
    return value.map((entry: unknown, index): PendingRejection => {
      const at = `outbox[${index}]`;
      if (typeof entry !== 'object' || entry === null) return corrupt(`${at} must be an object`);
      const { seq, resource, kind, rejected, current, wallMillis } = entry as Partial<
        Record<keyof PendingRejection, unknown>
      >;
      if (!isIntegerInRange(seq, 1) || seq <= previousSeq || seq >= nextSeq) {
        return corrupt(
          `${at}.seq must be an integer above ${previousSeq} and below nextSeq ${nextSeq}, got ${JSON.stringify(seq)}`,
        );
      }
      previousSeq = seq;
      if (resource !== this.resource)
        return corrupt(`${at}.resource must be ${JSON.stringify(this.resource)}, got ${JSON.stringify(resource)}`);
      if (kind !== 'stale' && kind !== 'double-grant')
        return corrupt(`${at}.kind must be "stale" or "double-grant", got ${JSON.stringify(kind)}`);
      const side = (name: 'rejected' | 'current', holder: unknown): { holderId: string; fence: number } => {
        const { holderId, fence } = (typeof holder === 'object' && holder !== null ? holder : {}) as {
          holderId?: unknown;
          fence?: unknown;
        };
        if (!isId(holderId) || !isIntegerInRange(fence, 1))
          return corrupt(`${at}.${name} must be { holderId: non-empty string, fence: positive integer }`);
        return { holderId, fence };
      };
      if (!Number.isFinite(wallMillis) || (wallMillis as number) < 0)
        return corrupt(`${at}.wallMillis must be epoch milliseconds ≥ 0, got ${JSON.stringify(wallMillis)}`);
      return {
        seq,
        resource,
        kind,
        rejected: side('rejected', rejected),
        current: side('current', current),
        wallMillis: wallMillis as number,
      };
    });
  }
}

const isMissing = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT';

const isId = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

const safely = (listener: () => void): void => {
  try {
    listener();
  } catch {
    // a listener's failure never fails the save that made the refusals durable
  }
};

/** Whether two merged states of one gate are the same (the outbox compared by seq: a seq's record never changes). */
const sameGateState = (a: GateState, b: GateState): boolean =>
  a.floor?.fence === b.floor?.fence &&
  a.floor?.holderId === b.floor?.holderId &&
  a.nextSeq === b.nextSeq &&
  a.reportedThroughSeq === b.reportedThroughSeq &&
  (a.outbox ?? []).map((entry) => entry.seq).join() === (b.outbox ?? []).map((entry) => entry.seq).join();
