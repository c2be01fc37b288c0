/**
 * A SQL gate's drainer killed mid-drain, black-box: the BUILT coordinator, a SQLite gate
 * (`@lease-fence/gate-sql`) whose outbox holds refusals, and its drainer (`drainSqlGate`) as a
 * process of its own, SIGKILLed again and again while it reports (before its first report, between
 * the coordinator's acknowledgement and the table's, after a few), with new refusals committed
 * between two kills, then restarted for good. What must hold: every refusal a writer was told
 * reaches the coordinator's log exactly once, in seq order, with no `RejectionsMissing`, and the
 * outbox table ends empty.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { FenceTokenVerifier } from '@lease-fence/client';
import { fencedTransaction, migrate, sqliteFenceGate } from '@lease-fence/gate-sql';
import { EventsReplySchema, type CoordinatorEvent } from '@lease-fence/protocol';
import Database from 'better-sqlite3';
import { StaleFenceError } from 'lease-fence';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COORDINATOR_MAIN, startCoordinator, type RunningCoordinator } from '../support/coordinator-process.js';
import { eventually } from '../support/eventually.js';
import { stopByPid } from '../support/stop-by-pid.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { TEST_TOKENS } from '../support/test-tokens.js';
import { acquireGrant, type TestGrant } from '../support/coordinator-http.js';

const DRAINER = fileURLToPath(new URL('./support/sql-drainer-child.mjs', import.meta.url));
const RESOURCE = 'deploy-sql-outbox';
/** Refusals in the outbox before the first drainer starts. */
const QUEUED = 12;
/** Refusals committed after each kill: at least the most reports a round waits for. */
const REFUSED_PER_ROUND = 5;

describe.skipIf(!existsSync(COORDINATOR_MAIN))('a SQL gate whose drainer is killed mid-drain', () => {
  let coordinator: RunningCoordinator;
  let dir: string;
  const drainers: ChildProcess[] = [];

  beforeAll(async () => {
    coordinator = await startCoordinator();
    dir = await createTempDir('sql-drainer-kill-');
  });
  afterAll(async () => {
    for (const drainer of drainers) await stopByPid(drainer, 'SIGKILL');
    await coordinator?.cleanup();
    await removeTempDir(dir);
  });

  /** Starts a drainer process; resolves with it and its `reported` lines once it printed `draining`. */
  const startDrainer = async (file: string): Promise<{ child: ChildProcess; reported: number[] }> => {
    const child = spawn(process.execPath, [DRAINER, file, RESOURCE, coordinator.url, TEST_TOKENS.gate.token], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    drainers.push(child);
    const reported: number[] = [];
    const started = new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line === 'draining') resolve();
        if (line.startsWith('reported ')) reported.push(Number(line.slice('reported '.length)));
      });
      child.once('exit', (code) => reject(new Error(`the drainer exited (${String(code)}) before it started`)));
    });
    await started;
    return { child, reported };
  };
  const acquire = (token: string, requestId: string): Promise<TestGrant> =>
    acquireGrant(coordinator.url, token, RESOURCE, requestId);
  const events = async (): Promise<CoordinatorEvent[]> => {
    const response = await fetch(`${coordinator.url}/v1/events?after=0&limit=10000`, {
      headers: { authorization: `Bearer ${TEST_TOKENS.viewer.token}` },
    });
    return EventsReplySchema.parse(await response.json())
      .events.map((recorded) => recorded.event)
      .filter((event) => 'resource' in event.data && event.data.resource === RESOURCE);
  };

  it('every refusal told reaches the log once, in seq order, across repeated SIGKILLs of the drainer', async () => {
    // Arrange: agent-a wrote, released; agent-b holds the newer fence and wrote; a's later writes are refused
    const file = join(dir, 'orders.sqlite');
    const database = new Database(file, { timeout: 5000 });
    database.pragma('journal_mode = WAL');
    const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { url: `${coordinator.url}/v1/keys` } });
    const gate = sqliteFenceGate({ database, resource: RESOURCE, verifier });
    await migrate(gate);
    const older = await acquire(TEST_TOKENS.agentA.token, 'sql-a');
    await fencedTransaction(gate, older.signedToken, async () => undefined);
    await fetch(`${coordinator.url}/v1/leases/${RESOURCE}/release`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKENS.agentA.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ fence: older.fence }),
    });
    const newer = await acquire(TEST_TOKENS.agentB.token, 'sql-b');
    await fencedTransaction(gate, newer.signedToken, async () => undefined);
    const told: number[] = [];
    const refuseStaleWrite = async (): Promise<void> => {
      const refusal = await fencedTransaction(gate, older.signedToken, async () => undefined).catch(
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(StaleFenceError);
      told.push((refusal as StaleFenceError).rejection.seq);
    };
    for (let index = 0; index < QUEUED; index += 1) await refuseStaleWrite();

    // Act: each round a drainer starts and is killed after `reportsBeforeKill` acknowledged reports
    // (0: as soon as it started), then more refusals are committed; a last drainer is left running.
    // The drainer sends what waits as a batch, so a round's acknowledged reports come a batch at a
    // time: each round commits enough refusals for the next round's count to be reached.
    const rounds: string[] = [];
    for (const reportsBeforeKill of [0, 1, 1, 2, 3, 1, 5]) {
      const { child, reported } = await startDrainer(file);
      if (reportsBeforeKill > 0)
        await eventually(`${reportsBeforeKill} reports`, () => reported.length >= reportsBeforeKill, 10_000, 1);
      await stopByPid(child, 'SIGKILL');
      rounds.push(`${reportsBeforeKill}→${reported.join('/') || '-'}`);
      for (let index = 0; index < REFUSED_PER_ROUND; index += 1) await refuseStaleWrite();
    }
    await startDrainer(file);
    await eventually('the outbox table empty', () => {
      const row = database.prepare('SELECT count(*) AS n FROM lease_fence_outbox').get() as { n: number };
      return row.n === 0;
    });

    // Assert: each refusal told once in the log, seqs in order, none declared missing
    const logged = await events();
    const seqs = logged
      .filter((event) => event.type === 'FenceRejected')
      .map((event) => (event.data as { seq: number }).seq);
    console.log(
      `SQL drainer killed ${rounds.length} times (reports before kill → acknowledged: ${rounds.join(' ')}); told ${told.join(',')}; logged ${seqs.join(',')}`,
    );
    expect(told).toEqual(told.map((_, index) => index + 1));
    expect(seqs).toEqual(told);
    expect(logged.filter((event) => event.type === 'RejectionsMissing')).toEqual([]);
    database.close();
  }, 60_000);
});
