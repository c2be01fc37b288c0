/**
 * A {@link FloorStore} in one small JSON file, replaced atomically: write a temporary file in the
 * same directory, fsync it, rename it over the old file, fsync the directory. A crash at any
 * point leaves either the old state or the new one, never a torn file and never no file.
 *
 * @see DESIGN.md § "The library's rules" (A resource restores its floor after its own restart)
 */
import { randomUUID } from 'node:crypto';
import { open, readFile, readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { FloorStoreCorruptError } from './errors.js';
import { mergeGateStates, type FloorStore, type GateState } from './floor-store.js';

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

/** The file's shape, version 1. */
interface FileContent {
  readonly version: 1;
  readonly resource: string;
  readonly floor: { readonly fence: number; readonly holderId: string } | null;
  readonly nextSeq: number;
  readonly reportedThroughSeq: number;
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
    throw new TypeError(`openFileFloorStore: resource must be a non-empty string, got ${JSON.stringify(options.resource)}`);
  }
  const prefix = `${basename(options.path)}.`;
  const directory = dirname(options.path);
  for (const name of await readdir(directory)) {
    if (name.startsWith(prefix) && name.endsWith('.tmp')) await unlink(join(directory, name)).catch(() => undefined);
  }
  return new FileFloorStore(options);
};

/** See {@link openFileFloorStore}. Saves are serialised and merged, so a floor never goes down. */
export class FileFloorStore implements FloorStore {
  /** The state file. */
  readonly path: string;
  /** The gate's resource. */
  readonly resource: string;
  readonly #beforeRename: FileFloorStoreOptions['beforeRename'];
  #latest: GateState | undefined;
  #queued: Promise<void> | undefined;
  #tail: Promise<void> = Promise.resolve();

  /** @internal use {@link openFileFloorStore}. */
  constructor(options: FileFloorStoreOptions) {
    this.path = options.path;
    this.resource = options.resource;
    this.#beforeRename = options.beforeRename;
  }

  /**
   * Reads the state file.
   * @returns The saved state, or `undefined` when the file does not exist.
   * @throws {@link FloorStoreCorruptError} when it is not a version-1 state of this resource.
   */
  async load(): Promise<GateState | undefined> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    const state = this.#parse(text);
    this.#latest = mergeGateStates(this.#latest, state);
    return state;
  }

  /**
   * Makes `state` (merged with everything saved before) durable. Concurrent saves share one
   * write when they can; each resolves after a write that includes it.
   * @throws TypeError when `state.resource` is another resource; what the file system throws.
   */
  save(state: GateState): Promise<void> {
    if (state.resource !== this.resource) {
      throw new TypeError(`FileFloorStore.save: state.resource must be ${JSON.stringify(this.resource)}, got ${JSON.stringify(state.resource)}`);
    }
    this.#latest = mergeGateStates(this.#latest, state);
    if (this.#queued === undefined) {
      const write = this.#tail.then(() => {
        this.#queued = undefined;
        return this.#write(this.#latest as GateState);
      });
      this.#queued = write;
      this.#tail = write.catch(() => undefined);
    }
    return this.#queued;
  }

  async #write(state: GateState): Promise<void> {
    const content: FileContent = {
      version: 1,
      resource: state.resource,
      floor: state.floor === undefined ? null : { fence: state.floor.fence, holderId: state.floor.holderId },
      nextSeq: state.nextSeq,
      reportedThroughSeq: state.reportedThroughSeq,
    };
    const tempPath = `${this.path}.${process.pid}.${randomUUID()}.tmp`;
    const file = await open(tempPath, 'wx', 0o600);
    try {
      await file.writeFile(`${JSON.stringify(content)}\n`, 'utf8');
      await file.sync();
    } finally {
      await file.close();
    }
    try {
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
    if (content.version !== 1) return corrupt(`unknown version ${JSON.stringify(content.version)}`);
    if (content.resource !== this.resource) return corrupt(`holds resource ${JSON.stringify(content.resource)}, not ${JSON.stringify(this.resource)}`);
    if (!isCount(content.nextSeq, 1)) return corrupt(`nextSeq must be an integer ≥ 1, got ${JSON.stringify(content.nextSeq)}`);
    if (!isCount(content.reportedThroughSeq, 0)) return corrupt(`reportedThroughSeq must be an integer ≥ 0, got ${JSON.stringify(content.reportedThroughSeq)}`);
    const { floor } = content;
    if (floor === null) return { resource: this.resource, nextSeq: content.nextSeq, reportedThroughSeq: content.reportedThroughSeq };
    if (typeof floor !== 'object' || floor === undefined) return corrupt('floor must be an object or null');
    const { fence, holderId } = floor as { fence?: unknown; holderId?: unknown };
    if (!isCount(fence, 1)) return corrupt(`floor.fence must be a positive integer, got ${JSON.stringify(fence)}`);
    if (typeof holderId !== 'string' || holderId.length === 0) return corrupt('floor.holderId must be a non-empty string');
    return { resource: this.resource, floor: { fence, holderId }, nextSeq: content.nextSeq, reportedThroughSeq: content.reportedThroughSeq };
  }
}

const isCount = (value: unknown, minimum: number): value is number => Number.isSafeInteger(value) && (value as number) >= minimum;

const isMissing = (error: unknown): boolean => typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT';
