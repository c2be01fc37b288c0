/**
 * Starts one `lease-fence-gate` sidecar (the built `apps/gate`, `dist/main.js`) in front of the
 * deploy recorder for one slot, as a child process: the demo kills it now and then (kill -9) and
 * starts it again on the same port and data directory, where its floor and refusal outbox wait.
 *
 * The child holds an IPC channel to the demo, so it stops by itself when the demo dies without
 * stopping it (the sidecar stops when its IPC channel closes). Its JSON log lines are shown as
 * demo log lines (actor `gate`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import type { Logger } from './log.js';

/** The built sidecar, beside the demo in the repository (`apps/gate/dist/main.js`). */
export const GATE_MAIN = fileURLToPath(new URL('../../gate/dist/main.js', import.meta.url));

/** Options of {@link startGateProcess}. */
export interface GateProcessOptions {
  /** The slot (resource) this gate guards: `LEASE_FENCE_GATE_RESOURCE`. */
  readonly resource: string;
  /** The deploy recorder's origin: `LEASE_FENCE_GATE_UPSTREAM`. */
  readonly upstreamUrl: string;
  /** The coordinator's base URL: `LEASE_FENCE_COORDINATOR_URL`. */
  readonly coordinatorUrl: string;
  /** A gate token covering `resource`: `LEASE_FENCE_GATE_TOKEN`. */
  readonly gateToken: string;
  /** The gate's floor file and outbox: `LEASE_FENCE_DATA_DIR`. */
  readonly dataDir: string;
  /** `PORT`; 0 = any free port. */
  readonly port: number;
  /** Milliseconds between two status reports to the coordinator: `LEASE_FENCE_GATE_STATUS_REPORT_MILLIS`. */
  readonly statusReportMillis?: number;
  /** Where the gate's log lines go. */
  readonly log: Logger;
}

/** A started sidecar. */
export interface GateProcess {
  /** `http://127.0.0.1:<port>`: where writers send their deploys. */
  readonly url: string;
  readonly child: ChildProcess;
}

/** The gate's log messages worth a demo line, and how to say them. */
const SHOWN: Readonly<Record<string, (fields: Record<string, unknown>) => string>> = {
  'floor restored': (f) =>
    `started: floor ${describeFloor(f['floor'])} and ${String(f['outbox'])} unreported refusal(s) restored from its data directory`,
  'refusal reported': (f) => `reported refusal #${String(f['seq'])} to the coordinator (FenceRejected)`,
  'refusal not reported yet': (f) => `could not report refusal #${String(f['seq'])} yet; it stays in the outbox`,
  'invalid token refused': (f) => `refused an invalid token (${String(f['reason'])})`,
  'gate link: admitted': (f) =>
    `admitted fence ${String(f['fence'])} (${String(f['holderId'])}) over its gate link before the grant`,
  'gate link: guarding': () => 'gate link open: fence-first handover for this slot',
};

/**
 * Spawns the sidecar and resolves once it logs `listening`.
 * @throws Error when it exits first (with its last output), e.g. a taken port or a missing build.
 */
export const startGateProcess = (options: GateProcessOptions): Promise<GateProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [GATE_MAIN], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: {
        ...process.env,
        LEASE_FENCE_GATE_RESOURCE: options.resource,
        LEASE_FENCE_GATE_UPSTREAM: options.upstreamUrl,
        LEASE_FENCE_COORDINATOR_URL: options.coordinatorUrl,
        LEASE_FENCE_GATE_TOKEN: options.gateToken,
        LEASE_FENCE_DATA_DIR: options.dataDir,
        PORT: String(options.port),
        HOST: '127.0.0.1',
        ...(options.statusReportMillis === undefined
          ? {}
          : { LEASE_FENCE_GATE_STATUS_REPORT_MILLIS: String(options.statusReportMillis) }),
      },
    });
    const recent: string[] = [];
    let listening = false;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      recent.push(line);
      if (recent.length > 20) recent.shift();
      const record = parseRecord(line);
      if (record === undefined) return;
      const msg = String(record['msg']);
      if (msg === 'listening' && typeof record['url'] === 'string' && !listening) {
        listening = true;
        resolve({ url: record['url'], child });
        return;
      }
      const show = SHOWN[msg];
      if (show !== undefined) options.log(options.resource, show(record));
      else if (typeof record['level'] === 'number' && record['level'] >= 40)
        options.log(
          options.resource,
          `${msg}${typeof record['err'] === 'object' ? `: ${errorMessage(record['err'])}` : ''}`,
        );
    });
    createInterface({ input: child.stderr! }).on('line', (line) => {
      recent.push(line);
      options.log(options.resource, `stderr: ${line}`);
    });
    child.once('exit', (code, signal) => {
      if (!listening)
        reject(
          new Error(
            `the gate of ${options.resource} exited before listening (code ${String(code)}, signal ${String(signal)}): ${recent.join(' | ')}`,
          ),
        );
    });
  });

const parseRecord = (line: string): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

const describeFloor = (floor: unknown): string => {
  const { fence, holderId } = (floor ?? {}) as { fence?: unknown; holderId?: unknown };
  return typeof fence === 'number' ? `fence ${fence} (${String(holderId)})` : 'none';
};

const errorMessage = (err: unknown): string => String((err as { message?: unknown }).message ?? 'error');
