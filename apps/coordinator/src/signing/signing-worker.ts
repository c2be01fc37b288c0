/**
 * The grant signing thread: a worker (node:worker_threads) holding the active private key, which
 * signs a batch's grants with node:crypto's Ed25519 `sign` while the batch's append is committed
 * by the event log's writer thread. The coordinator hands it all the grants of one append in one
 * message and gets their signatures back in one message, so the replies of a group commit still
 * leave in one turn (BENCHMARKS.md, "the signature off the event loop": signing each grant on
 * libuv's pool split them, one turn and one `writev` per reply).
 *
 * What it signs is not shown to anyone until the grant is durable: {@link GrantSigner} keeps the
 * signatures apart from its latest-token cache and hands one out only to a reply built after the
 * grant's outcome resolved (`grant-signer.ts`).
 *
 * Lifecycle: the thread keeps the process alive only while a batch is being signed. If it dies,
 * every batch in flight and every later one rejects with {@link SigningWorkerStoppedError}, and
 * the signer signs on the main thread instead (never a hang).
 */
import type { KeyObject } from 'node:crypto';
import { Worker } from 'node:worker_threads';

/**
 * The worker's code, evaluated as a CommonJS script (`eval: true`) for the reason
 * `libs/event-log-sqlite/src/quick-check.ts` gives (a file beside this module would be `.ts`
 * under the test runner). One message in: `{ id, inputs }` (JWS signing inputs); one out:
 * `{ id, signatures }` (base64url Ed25519 signatures, in the same order) or `{ id, error }`.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { sign } = require('node:crypto');
const privateKey = workerData.privateKey;
parentPort.on('message', ({ id, inputs }) => {
  try {
    const signatures = inputs.map((input) => sign(null, Buffer.from(input), privateKey).toString('base64url'));
    parentPort.postMessage({ id, signatures });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error instanceof Error ? error.message : error) });
  }
});
`;

/** The signing thread stopped (it died, failed to sign, or was closed): sign on the main thread instead. */
export class SigningWorkerStoppedError extends Error {
  override readonly name = 'SigningWorkerStoppedError';
}

/** A batch posted to the thread and not answered yet. */
interface InFlightBatch {
  readonly resolve: (signatures: readonly string[]) => void;
  readonly reject: (error: Error) => void;
}

/** A running signing thread (see the module's comment). */
export class SigningWorker {
  private readonly worker: Worker;
  private readonly inFlight = new Map<number, InFlightBatch>();
  private nextId = 0;
  /** Set once the thread stopped: every batch in flight and every later one rejects with it. */
  private stoppedWith: SigningWorkerStoppedError | undefined;

  /**
   * Starts the thread with `privateKey` (cloned into it). Returns at once; batches posted before
   * the thread is up wait in its port.
   * @param onStopped - Called once if the thread stops on its own (not after {@link SigningWorker.close}), with why.
   */
  constructor(
    privateKey: KeyObject,
    private readonly onStopped?: (error: SigningWorkerStoppedError) => void,
  ) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { privateKey } });
    this.worker.unref();
    this.worker.on(
      'message',
      (message: { readonly id: number; readonly signatures?: string[]; readonly error?: string }) => {
        const batch = this.inFlight.get(message.id);
        if (batch === undefined) return;
        this.inFlight.delete(message.id);
        if (this.inFlight.size === 0) this.worker.unref();
        if (message.signatures !== undefined) batch.resolve(message.signatures);
        else batch.reject(new SigningWorkerStoppedError(`the signing thread failed to sign: ${message.error}`));
      },
    );
    this.worker.on('error', (error) => this.stop(`the signing thread failed: ${error.message}`, true));
    this.worker.on('exit', (code) => this.stop(`the signing thread exited (code ${code})`, true));
  }

  /** Whether batches are still signed on the thread (false once it stopped or was closed). */
  get running(): boolean {
    return this.stoppedWith === undefined;
  }

  /**
   * Signs each JWS signing input with the thread's key, in one message each way.
   * @param inputs - `<header>.<payload>` strings (base64url), as `grant-signer.ts` builds them.
   * @returns the base64url signatures, in the order of `inputs`.
   * @throws {@link SigningWorkerStoppedError} (the promise rejects) when the thread stopped, now or before it answers.
   */
  sign(inputs: readonly string[]): Promise<readonly string[]> {
    if (this.stoppedWith !== undefined) return Promise.reject(this.stoppedWith);
    const id = this.nextId++;
    return new Promise<readonly string[]>((resolve, reject) => {
      this.inFlight.set(id, { resolve, reject });
      if (this.inFlight.size === 1) this.worker.ref();
      this.worker.postMessage({ id, inputs });
    });
  }

  /** Ends the thread; batches in flight reject with {@link SigningWorkerStoppedError}. Idempotent. */
  async close(): Promise<void> {
    this.stop('the signing thread was closed', false);
    await this.worker.terminate();
  }

  /** Test hook: ends the thread as a crash would (`onStopped` is called). */
  async terminateForTest(): Promise<void> {
    await this.worker.terminate();
  }

  private stop(message: string, onItsOwn: boolean): void {
    if (this.stoppedWith !== undefined) return;
    const error = new SigningWorkerStoppedError(message);
    this.stoppedWith = error;
    for (const batch of this.inFlight.values()) batch.reject(error);
    this.inFlight.clear();
    if (onItsOwn) this.onStopped?.(error);
  }
}
