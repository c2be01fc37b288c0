/**
 * Process entry of the demo's fenced resource (`node dist/deploy-slot-main.js`), started by
 * `main.js` as a child process so it can be killed -9 and restarted: its floors come back from
 * its own database.
 *
 * Environment (set by main.js): `LEASE_FENCE_URL`, `DEMO_GATE_TOKEN`, `DEMO_RESOURCES`
 * (comma-separated), `DEMO_SLOT_PORT` (0 = any), `LEASE_FENCE_DEMO_DIR`; `LEASE_FENCE_NAMESPACE`
 * (default `default`): the namespace whose signed grants the slot accepts.
 * It holds the gate link to `LEASE_FENCE_URL` open (with fence-first on for the slots, a grant
 * becomes active only once this slot has durably admitted its fence) and reports its floors there.
 * Sends `{ type: 'listening', url }` over IPC once it accepts writes.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FenceGateClient, FenceTokenVerifier } from '@lease-fence/client';
import { DeployLedger } from './deploy-slot/deploy-ledger.js';
import { openDeploySlotServer } from './deploy-slot/deploy-slot-server.js';
import { createLogger } from './log.js';

const log = createLogger('deploy-slot');
const env = process.env;
const dataDir = env['LEASE_FENCE_DEMO_DIR'] ?? 'data/demo';
mkdirSync(dataDir, { recursive: true });
const ledger = new DeployLedger(join(dataDir, 'deploy-slot.sqlite'));
const gateClient = new FenceGateClient({
  baseUrl: env['LEASE_FENCE_URL'] ?? '',
  token: env['DEMO_GATE_TOKEN'] ?? '',
  timeoutMillis: 2000,
  retry: { maxAttempts: 3, initialDelayMillis: 100, maxDelayMillis: 1000 },
});
// Signed grants are checked against the coordinator's published keys (fetched once, then cached).
const verifier = new FenceTokenVerifier({
  namespace: env['LEASE_FENCE_NAMESPACE'] ?? 'default',
  keys: { url: new URL('/v1/keys', env['LEASE_FENCE_URL'] ?? '') },
});
const server = await openDeploySlotServer({
  resources: (env['DEMO_RESOURCES'] ?? '').split(',').filter((name) => name.length > 0),
  ledger,
  gateClient,
  verifier,
  port: Number(env['DEMO_SLOT_PORT'] ?? '0'),
  log,
  // the gate link (fence-first handover) and floor reports (total-loss recovery)
  coordinator: { baseUrl: env['LEASE_FENCE_URL'] ?? '', token: env['DEMO_GATE_TOKEN'] ?? '' },
});
process.send?.({ type: 'listening', url: server.url });

let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  await Promise.race([server.flushReports(), new Promise((resolve) => setTimeout(resolve, 2000))]);
  await server.close();
  ledger.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
process.on('disconnect', () => void stop());
