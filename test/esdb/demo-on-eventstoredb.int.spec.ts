/**
 * Issue 6, last "Done when": `LEASE_FENCE_EVENT_LOG=eventstoredb` with a connection string to the
 * ESDB wire emulator (a test double of KurrentDB, test/support/esdb-wire-emulator) serves the demo
 * end to end. Black box: the BUILT coordinator and the BUILT demo (`apps/demo/dist`: deploy slot,
 * four contending agents, lossy proxy) as child processes; the test waits on the coordinator's
 * WebSocket stream, never on a sleep, then looks past the client into the emulator's stream.
 */
import { join } from 'node:path';
import { EventsReplySchema, type RecordedEvent } from '@lease-fence/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCoordinator, type RunningCoordinator } from '../support/coordinator-process.js';
import { startEsdbWireEmulator, type EsdbWireEmulator, type StoredEvent } from '../support/esdb-wire-emulator/index.js';
import { createSigningKeysFile } from '../support/signing-keys.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { writeTokensFile } from '../support/test-tokens.js';
import { TEST_TOKENS as DEMO_TOKENS } from '../sdk/support/coordinator-process.js';
import { waitForEventTypes } from '../sdk/support/event-stream.js';
import { startDemo, type RunningDemo } from './support/demo-process.js';

/** The coordinator namespace of this file; its log is the emulator's stream `leaseFence-<namespace>` (docs/eventstoredb.md). */
const NAMESPACE = `demo-${process.pid}`;
const VIEWER_TOKEN = DEMO_TOKENS.find((entry) => entry.role === 'viewer')!.token;
const GATE_ID = 'deploy-gate';

/** A faster demo than the default, as test/sdk/start-and-demo runs it; the slot is not crashed (that is the SQLite demo's concern). */
const DEMO_SETTINGS = {
  DEMO_AGENTS: '4',
  DEMO_RESOURCES: 'deploy-slot-a,deploy-slot-b',
  DEMO_TTL_MILLIS: '1500',
  DEMO_MODEL_CALL_MILLIS: '300-2500',
  DEMO_STALL_PROBABILITY: '0.5',
  DEMO_RESOURCE_RESTART_EVERY_MILLIS: '0',
  DEMO_SEED: '20260101',
} as const;

/** What one log position holds, as the coordinator serves it and as the emulator stores it. */
interface LoggedEvent {
  readonly position: number;
  readonly type: string;
  readonly data: unknown;
  readonly recordedAtMillis: number;
}

/** Every event the coordinator serves from `GET /v1/events`, page by page up to the head it reports. */
async function readServedLog(url: string): Promise<LoggedEvent[]> {
  const served: RecordedEvent[] = [];
  for (;;) {
    const after = served.at(-1)?.position ?? 0;
    const response = await fetch(`${url}/v1/events?after=${after}&limit=1000`, {
      headers: { authorization: `Bearer ${VIEWER_TOKEN}` },
    });
    expect(response.status).toBe(200);
    const page = EventsReplySchema.parse(await response.json());
    served.push(...page.events);
    if (page.events.length === 0 || (served.at(-1)?.position ?? 0) >= page.head) break;
  }
  return served.map(({ position, event, recordedAtMillis }) => ({
    position,
    type: event.type,
    data: event.data,
    recordedAtMillis,
  }));
}

/** Every event in the emulator's stream of {@link NAMESPACE}, decoded from the bytes the client sent. */
function readStoredLog(emulator: EsdbWireEmulator): LoggedEvent[] {
  const stored: readonly StoredEvent[] =
    emulator.store.read(`leaseFence-${NAMESPACE}`, { direction: 'forwards', from: 'start', maxCount: 1_000_000n }) ??
    [];
  const decode = (bytes: Uint8Array): unknown => JSON.parse(Buffer.from(bytes).toString('utf8'));
  return stored.map((event) => ({
    position: Number(event.revision) + 1,
    type: event.type,
    data: decode(event.data),
    recordedAtMillis: (decode(event.customMetadata) as { recordedAtMillis: number }).recordedAtMillis,
  }));
}

describe('the demo on EventStoreDB', () => {
  let emulator: EsdbWireEmulator | undefined;
  let coordinator: RunningCoordinator | undefined;
  let demo: RunningDemo | undefined;
  let dir: string | undefined;
  let tokensFile = '';

  beforeAll(async () => {
    emulator = await startEsdbWireEmulator();
    dir = await createTempDir('lease-fence-esdb-demo-');
    tokensFile = await writeTokensFile(dir, DEMO_TOKENS);
    coordinator = await startCoordinator({
      env: {
        LEASE_FENCE_EVENT_LOG: 'eventstoredb',
        EVENTSTORE_CONNECTION_STRING: emulator.connectionString,
        LEASE_FENCE_SIGNING_KEYS_FILE: await createSigningKeysFile(dir),
        LEASE_FENCE_NAMESPACE: NAMESPACE,
        LEASE_FENCE_TOKENS_FILE: tokensFile,
      },
    });
  });

  afterAll(async () => {
    await demo?.stop();
    await coordinator?.cleanup();
    await emulator?.stop();
    if (dir !== undefined) await removeTempDir(dir);
  });

  it('serves the demo end to end: grants, renewals, expiries and refused stale writes are logged, every event served is in the EventStoreDB stream at its position, and the demo stops cleanly', async () => {
    // Given the built coordinator on the emulator, and the built demo started against it
    // (the deploy slots' gates accept signed grants of this namespace only)
    const running = startDemo({
      coordinatorUrl: coordinator!.url,
      tokensFile,
      dataDir: join(dir!, 'demo'),
      env: { ...DEMO_SETTINGS, LEASE_FENCE_NAMESPACE: NAMESPACE },
    });
    demo = running;

    // When its agents contend until the log shows a grant, a renewal, an expiry and a stale write refused at the slot
    const seen = await waitForEventTypes(
      coordinator!.url,
      VIEWER_TOKEN,
      ['LeaseGranted', 'LeaseRenewed', 'LeaseExpired', 'FenceRejected'],
      90_000,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n--- demo output ---\n${running.output.slice(-60).join('\n')}`);
    });
    // And the demo is stopped (SIGTERM): its agents release their leases
    const exit = await running.stop();

    // Then the demo exited cleanly, having seen its stale write refused by a slot's gate
    expect(seen).toMatchObject({
      LeaseGranted: expect.any(Number),
      LeaseRenewed: expect.any(Number),
      LeaseExpired: expect.any(Number),
      FenceRejected: expect.any(Number),
    });
    expect(exit).toEqual({ code: 0, signal: null });
    expect(running.output.some((line) => /deploy-slot-[ab] +wrote .* REFUSED by the gate with 409/.test(line))).toBe(
      true,
    );

    // And the coordinator's log holds the demo's story: its agents' grants and its gate's refusals
    const served = await readServedLog(coordinator!.url);
    const holders = new Set(
      served.flatMap((event) => (event.type === 'LeaseGranted' ? [(event.data as { holderId: string }).holderId] : [])),
    );
    expect(holders.size).toBeGreaterThan(0);
    expect([...holders].every((holderId) => /^agent-[1-4]$/.test(holderId))).toBe(true);
    const refusals = served.filter((event) => event.type === 'FenceRejected');
    expect(refusals.length).toBeGreaterThan(0);
    for (const refusal of refusals)
      expect(refusal.data).toMatchObject({ gateId: GATE_ID, resource: expect.stringMatching(/^deploy-slot-[ab]$/) });

    // And nothing it acknowledged is missing from EventStoreDB: the stream holds every served event at revision position − 1, with the same type, data and wall time
    const stored = readStoredLog(emulator!);
    expect(stored.length).toBeGreaterThanOrEqual(served.length);
    expect(stored.slice(0, served.length)).toEqual(served);
  }, 150_000);
});
