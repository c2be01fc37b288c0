/**
 * A share of `bench-stream`'s viewers, in a worker thread (its own event loop), so that 200
 * viewers are spread over threads and one busy loop does not add its queueing to every lag.
 * Each viewer does the minimal honest work of a client: it receives every frame (ws decodes and
 * UTF-8-validates it), reads `position` and `recordedAtMillis` of each `event` frame from its
 * bytes without parsing the rest, checks that positions are contiguous (counting gaps and
 * duplicates), and records the lag of EVERY event it receives after the measured start (no
 * sampling) in a 1 ms histogram.
 *
 * Messages: the worker posts `{ type: 'ready' }` once every viewer got `caught-up`. The parent
 * sends `{ type: 'measure', afterPosition }` (count frames and lags of positions after it),
 * `{ type: 'window-end' }` (freeze the frame count of the window), `{ type: 'report' }` (answered
 * with a {@link ViewersReport}) and `{ type: 'close' }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import WebSocket from 'ws';

/** What the parent passes in `workerData`. */
export interface StreamViewersOptions {
  readonly wsUrl: string;
  readonly token: string;
  readonly viewers: number;
}

/** Largest lag the histogram resolves (milliseconds); larger lags land in the last bucket. */
const MAX_LAG_MILLIS = 60_000;

/** What the worker answers to `report`. */
export interface ViewersReport {
  readonly type: 'report';
  /** Lag histogram: `lagCounts[m]` events arrived `m` ms (rounded) after their `recordedAtMillis`. */
  readonly lagCounts: Uint32Array;
  readonly lagMaxMillis: number;
  /** Event frames received by all viewers of this worker between `measure` and `window-end`. */
  readonly framesInWindow: number;
  /** Each viewer's last position. */
  readonly lastPositions: readonly number[];
  /** Positions that skipped ahead / went backwards, summed over viewers. */
  readonly gaps: number;
  readonly duplicates: number;
  /** Why each closed viewer closed (`closing` frame or close code). */
  readonly closed: readonly string[];
}

const { wsUrl, token, viewers: count } = workerData as StreamViewersOptions;

const EVENT_PREFIX = Buffer.from('{"type":"event","position":');
const RECORDED_AT = Buffer.from(',"recordedAtMillis":');
const CAUGHT_UP_PREFIX = Buffer.from('{"type":"caught-up"');
const CLOSING_PREFIX = Buffer.from('{"type":"closing"');
const DIGIT_0 = 0x30;

const lagCounts = new Uint32Array(MAX_LAG_MILLIS + 1);
let lagMaxMillis = 0;
let afterPosition = Number.POSITIVE_INFINITY;
let counting = false;
let framesInWindow = 0;
let gaps = 0;
let duplicates = 0;

/** The non-negative integer whose digits start at `offset` of `bytes`, and where its digits end. */
function readInteger(bytes: Buffer, offset: number): { value: number; end: number } {
  let value = 0;
  let at = offset;
  for (; at < bytes.length; at += 1) {
    const digit = bytes[at]! - DIGIT_0;
    if (digit < 0 || digit > 9) break;
    value = value * 10 + digit;
  }
  return { value, end: at };
}

const startsWith = (bytes: Buffer, prefix: Buffer, at = 0): boolean =>
  bytes.compare(prefix, 0, prefix.length, at, at + prefix.length) === 0;

/** One viewer: connects after 0, resolves at `caught-up`, then checks and measures every event. */
class Viewer {
  lastPosition = 0;
  closedBy: string | undefined;
  private socket!: WebSocket;

  connect(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket = new WebSocket(`${wsUrl}/v1/stream?after=0&token=${encodeURIComponent(token)}`);
      this.socket.once('error', reject);
      this.socket.on('close', (code, reason) => {
        this.closedBy ??= `${code} ${reason.toString()}`;
      });
      this.socket.on('message', (data: Buffer) => {
        if (startsWith(data, EVENT_PREFIX)) this.onEvent(data, Date.now());
        else if (startsWith(data, CAUGHT_UP_PREFIX)) resolve();
        else if (startsWith(data, CLOSING_PREFIX)) this.closedBy = data.toString();
      });
    });
  }

  close(): void {
    this.socket.terminate();
  }

  private onEvent(data: Buffer, receivedAtMillis: number): void {
    const position = readInteger(data, EVENT_PREFIX.length);
    if (position.value === this.lastPosition + 1) this.lastPosition = position.value;
    else if (position.value <= this.lastPosition) duplicates += 1;
    else {
      gaps += 1;
      this.lastPosition = position.value;
    }
    if (position.value <= afterPosition) return;
    if (counting) framesInWindow += 1;
    if (!startsWith(data, RECORDED_AT, position.end)) return;
    const recordedAtMillis = readInteger(data, position.end + RECORDED_AT.length).value;
    const lagMillis = Math.max(0, receivedAtMillis - recordedAtMillis);
    lagCounts[Math.min(MAX_LAG_MILLIS, lagMillis)]! += 1;
    if (lagMillis > lagMaxMillis) lagMaxMillis = lagMillis;
  }
}

const viewers = Array.from({ length: count }, () => new Viewer());
// Connect in groups, so the upgrade requests do not all land in one turn.
for (let i = 0; i < viewers.length; i += 20)
  await Promise.all(viewers.slice(i, i + 20).map((viewer) => viewer.connect()));
parentPort!.postMessage({ type: 'ready' });

parentPort!.on(
  'message',
  (message: { type: 'measure'; afterPosition: number } | { type: 'window-end' | 'report' | 'close' }) => {
    switch (message.type) {
      case 'measure':
        afterPosition = message.afterPosition;
        counting = true;
        break;
      case 'window-end':
        counting = false;
        break;
      case 'report':
        parentPort!.postMessage({
          type: 'report',
          lagCounts,
          lagMaxMillis,
          framesInWindow,
          lastPositions: viewers.map((viewer) => viewer.lastPosition),
          gaps,
          duplicates,
          closed: viewers.flatMap((viewer) => (viewer.closedBy === undefined ? [] : [viewer.closedBy])),
        } satisfies ViewersReport);
        break;
      case 'close':
        for (const viewer of viewers) viewer.close();
        parentPort!.close();
        break;
    }
  },
);
