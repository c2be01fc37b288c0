/**
 * The behaviour every transactional gate must have, run against each database by a factory
 * (`postgres-gate.int.spec.ts`, `sqlite-gate.int.spec.ts`): admit, refuse, double grant, the
 * caller's error, invalid tokens, the outbox drained to a coordinator, and a writer killed with
 * SIGKILL in the middle of its transaction.
 */
import {
  CoordinatorHttpError,
  FenceGateClient,
  FenceTokenVerifier,
  InvalidFenceTokenError,
  type FloorSink,
} from '@lease-fence/client';
import { openCoordinatorTestDouble, createTestSigningKey } from '@lease-fence/client/testing';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { DoubleGrantError, StaleFenceError } from 'lease-fence';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  drainSqlGate,
  fencedTransaction,
  migrate,
  sqlGateGuard,
  type GateRecoverySource,
  type SqlFenceGate,
  type SqlGateDrainer,
} from '../src/index.js';
import { createTestGrants, type TestGrants } from './databases.js';

/** One database under test, with a `writes (id, holder_id, fence)` table the writers fill. */
export interface GateUnderTest<Tx> {
  /**
   * A gate on `resource` (each call: a new gate object, as after a restart of the process);
   * `coordinator`, when given, is passed as the gate's option of that name.
   */
  gate(resource: string, grants: Pick<TestGrants, 'verifier'>, coordinator?: GateRecoverySource): SqlFenceGate<Tx>;
  /** Runs `sql` (statements without parameters, `;`-separated) on a connection of its own, as an operator would. */
  execute(sql: string): Promise<void>;
  /** Creates the `writes` table. */
  createWrites(): Promise<void>;
  /** Inserts a `writes` row in the fenced transaction. */
  write(tx: Tx, holderId: string, fence: number): Promise<void>;
  /** Every committed `writes` row, by id. */
  writes(): Promise<{ holderId: string; fence: number }[]>;
  /** The writer child's arguments: dialect and connection string or path. */
  readonly child: { readonly dialect: 'postgres' | 'sqlite'; readonly target: string };
  /**
   * Resolves once a second writer is waiting on the lock the first holds (PostgreSQL: seen in
   * pg_stat_activity). SQLite shows no waiter from outside, so it gives the writer a moment to
   * reach its BEGIN IMMEDIATE: if it came later, it would be refused all the same.
   */
  waitUntilWriterBlocked(): Promise<void>;
  /** The resource's floor as committed, read on a connection of its own (outside any fenced transaction). */
  committedFloor(resource: string): Promise<{ fence: number; holderId: string } | undefined>;
  /** Ends every connection. */
  close(): Promise<void>;
}

const RESOURCE = 'orders-db';

/** Registers the contract's tests for one database. */
export const describeSqlGateContract = <Tx>(name: string, open: () => Promise<GateUnderTest<Tx>>): void => {
  describe(`${name}: the transactional gate contract`, () => {
    let db: GateUnderTest<Tx>;
    let grants: TestGrants;
    let gate: SqlFenceGate<Tx>;

    /** A fenced write of a `writes` row under a grant of `fence` to `holderId`. */
    const write = async (holderId: string, fence: number, target = gate): Promise<void> =>
      fencedTransaction(target, await grants.grant(RESOURCE, holderId, fence), (tx) => db.write(tx, holderId, fence));
    const state = () => gate.driver.readState(RESOURCE);

    beforeEach(async () => {
      db = await open();
      grants = await createTestGrants();
      gate = db.gate(RESOURCE, grants);
      await migrate(gate);
      await migrate(gate); // idempotent
      await db.createWrites();
    });
    afterEach(async () => {
      await db.close();
    });

    it('admits a fence at or above the floor, raising the floor in the same commit as the write', async () => {
      await write('agent-1', 3);
      expect(await state()).toEqual({
        floor: { fence: 3, holderId: 'agent-1' },
        nextSeq: 1,
        reportedThroughSeq: 0,
        outbox: [],
      });
      await write('agent-1', 3); // the same generation writing again
      await write('agent-2', 4);
      expect(await db.writes()).toEqual([
        { holderId: 'agent-1', fence: 3 },
        { holderId: 'agent-1', fence: 3 },
        { holderId: 'agent-2', fence: 4 },
      ]);
      expect((await state())?.floor).toEqual({ fence: 4, holderId: 'agent-2' });
    });

    it("refuses a stale fence: the refusal is committed alone in the outbox, the caller's statements never run", async () => {
      await write('agent-2', 5);
      let ran = false;
      const stale = fencedTransaction(gate, await grants.grant(RESOURCE, 'agent-1', 4), async (tx) => {
        ran = true;
        await db.write(tx, 'agent-1', 4);
      });
      const error: unknown = await stale.catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(StaleFenceError);
      expect(ran).toBe(false);
      expect((error as StaleFenceError).rejection).toEqual({
        seq: 1,
        resource: RESOURCE,
        kind: 'stale',
        rejected: { holderId: 'agent-1', fence: 4 },
        current: { holderId: 'agent-2', fence: 5 },
      });
      const after = await state();
      expect(after).toMatchObject({ floor: { fence: 5, holderId: 'agent-2' }, nextSeq: 2, reportedThroughSeq: 0 });
      expect(after?.outbox).toEqual([
        {
          seq: 1,
          resource: RESOURCE,
          kind: 'stale',
          rejected: { holderId: 'agent-1', fence: 4 },
          current: { holderId: 'agent-2', fence: 5 },
          wallMillis: expect.any(Number),
        },
      ]);
      expect(await db.writes()).toEqual([{ holderId: 'agent-2', fence: 5 }]);
    });

    it("refuses a second holder on the floor's fence as a double grant, with the next seq, also from a new gate object", async () => {
      await write('agent-2', 5);
      await expect(write('agent-1', 2)).rejects.toBeInstanceOf(StaleFenceError);
      const restarted = db.gate(RESOURCE, grants);
      const error: unknown = await write('agent-3', 5, restarted).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DoubleGrantError);
      expect((error as DoubleGrantError).rejection).toMatchObject({
        seq: 2,
        kind: 'double-grant',
        rejected: { holderId: 'agent-3', fence: 5 },
        current: { holderId: 'agent-2', fence: 5 },
      });
      expect((await state())?.outbox.map((refusal) => [refusal.seq, refusal.kind])).toEqual([
        [1, 'stale'],
        [2, 'double-grant'],
      ]);
      expect(await db.writes()).toEqual([{ holderId: 'agent-2', fence: 5 }]);
    });

    it("rolls back the raised floor together with the caller's statements when the caller throws", async () => {
      await write('agent-1', 1);
      const failure = new Error('constraint violated by the caller');
      await expect(
        fencedTransaction(gate, await grants.grant(RESOURCE, 'agent-2', 7), async (tx) => {
          await db.write(tx, 'agent-2', 7);
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(await db.writes()).toEqual([{ holderId: 'agent-1', fence: 1 }]);
      expect((await state())?.floor).toEqual({ fence: 1, holderId: 'agent-1' });
      await write('agent-3', 6); // below the rolled-back 7: admitted, since 7 never became the floor
      expect((await state())?.floor).toEqual({ fence: 6, holderId: 'agent-3' });
    });

    it('refuses forged, altered and foreign tokens before any statement: nothing changes, nothing is recorded as a refusal', async () => {
      await write('agent-1', 5);
      const before = await state();
      const stranger = await createTestSigningKey();
      const genuine = await grants.grant(RESOURCE, 'agent-9', 9);
      const [header, payload, signature] = genuine.split('.') as [string, string, string];
      const raised = Buffer.from(
        JSON.stringify({ resource: RESOURCE, holderId: 'agent-9', fence: 99, namespace: 'default' }),
      ).toString('base64url');
      const bad: [string, unknown][] = [
        [
          'bad-signature',
          await stranger.sign(
            { resource: RESOURCE, holderId: 'agent-9', fence: 9, namespace: 'default' },
            { kid: grants.key.kid },
          ),
        ],
        [
          'unknown-key',
          await stranger.sign({ resource: RESOURCE, holderId: 'agent-9', fence: 9, namespace: 'default' }),
        ],
        ['bad-signature', `${header}.${raised}.${signature}`],
        ['bad-signature', `${header}.${payload}.${signature.slice(0, -4)}AAAA`],
        ['wrong-resource', await grants.grant('another-db', 'agent-9', 9)],
        [
          'wrong-namespace',
          await grants.key.sign({ resource: RESOURCE, holderId: 'agent-9', fence: 9, namespace: 'staging' }),
        ],
        ['malformed', 'not a token'],
        ['malformed', 42],
      ];
      for (const [reason, token] of bad) {
        let ran = false;
        const error: unknown = await fencedTransaction(gate, token as string, () => {
          ran = true;
        }).catch((caught: unknown) => caught);
        expect(error, reason).toBeInstanceOf(InvalidFenceTokenError);
        expect((error as InvalidFenceTokenError).reason).toBe(reason);
        expect(ran).toBe(false);
      }
      expect(await state()).toEqual(before);
      expect(await db.writes()).toEqual([{ holderId: 'agent-1', fence: 5 }]);
      expect(gate.verifier.stats.invalid).toBe(bad.length);
    });

    it('serialises concurrent fenced transactions: committed writes never go back to a lower fence, refusals get contiguous seqs', async () => {
      const fences = Array.from({ length: 40 }, (_, index) => ((index * 7919) % 23) + 1);
      const outcomes = await Promise.allSettled(fences.map((fence) => write(`agent-${fence}`, fence)));
      const committed = await db.writes();
      for (let index = 1; index < committed.length; index += 1)
        expect(committed[index]!.fence).toBeGreaterThanOrEqual(committed[index - 1]!.fence);
      const refused = outcomes.filter((outcome) => outcome.status === 'rejected');
      expect(committed.length + refused.length).toBe(fences.length);
      for (const outcome of refused) expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(StaleFenceError);
      const after = await state();
      expect(after?.floor?.fence).toBe(Math.max(...committed.map((row) => row.fence)));
      expect(after?.outbox.map((refusal) => refusal.seq)).toEqual(refused.map((_, index) => index + 1));
    });

    describe('the drainer', () => {
      let drainer: SqlGateDrainer | undefined;
      afterEach(async () => {
        await drainer?.close();
        drainer = undefined;
      });

      it('delivers the outbox to the coordinator in seq order, contiguous, each once, and reports the floor', async () => {
        const double = await openCoordinatorTestDouble({
          tokens: [{ token: 'token-gate', role: 'gate', gateId: 'orders-gate', resources: ['orders-*'] }],
        });
        try {
          await write('agent-2', 5);
          for (const fence of [1, 2, 3]) await expect(write('agent-1', fence)).rejects.toBeInstanceOf(StaleFenceError);
          const client = new FenceGateClient({
            baseUrl: double.url,
            token: 'token-gate',
            retry: { maxAttempts: 2, initialDelayMillis: 0 },
          });
          const floors: { resource: string; fence: number; holderId: string }[] = [];
          const sink: FloorSink = {
            reportFloor: async (resource, floor) => {
              floors.push({ resource, ...floor });
              return { raised: false, fenceCounter: floor.fence };
            },
          };
          const errors: unknown[] = [];
          drainer = drainSqlGate(
            gate,
            {
              reportRejection: (rejection, options) => client.reportRejection(rejection, options),
              reportFloor: sink.reportFloor,
            },
            { onError: (error) => errors.push(error), pollIntervalMillis: 50 },
          );
          await drainer.flush();
          expect(double.rejections.map((entry) => entry.body.seq)).toEqual([1, 2, 3]);
          expect(double.rejections[0]).toMatchObject({
            gateId: 'orders-gate',
            body: {
              resource: RESOURCE,
              kind: 'stale',
              rejected: { holderId: 'agent-1', fence: 1 },
              current: { holderId: 'agent-2', fence: 5 },
            },
          });
          expect(await state()).toMatchObject({ reportedThroughSeq: 3, outbox: [] });
          // a refusal committed by another process (another gate object) is found by polling
          await expect(write('agent-1', 4, db.gate(RESOURCE, grants))).rejects.toBeInstanceOf(StaleFenceError);
          await expect
            .poll(() => double.rejections.map((entry) => entry.body.seq), { timeout: 10_000 })
            .toEqual([1, 2, 3, 4]);
          await expect.poll(async () => (await state())?.reportedThroughSeq, { timeout: 10_000 }).toBe(4);
          expect(floors[0]).toEqual({ resource: RESOURCE, fence: 5, holderId: 'agent-2' });
          expect(errors).toEqual([]);
        } finally {
          await drainer?.close();
          await double.close();
        }
      });
      it('delivers a backlog in batches (one request for many refusals), each refusal once, in seq order', async () => {
        const double = await openCoordinatorTestDouble({
          tokens: [{ token: 'token-gate', role: 'gate', gateId: 'orders-gate', resources: ['orders-*'] }],
        });
        try {
          await write('agent-2', 5);
          // refused while no drainer ran (the coordinator was out of reach): they wait in the outbox
          for (let index = 0; index < 20; index += 1)
            await expect(write('agent-1', 1 + (index % 4))).rejects.toBeInstanceOf(StaleFenceError);
          const client = new FenceGateClient({ baseUrl: double.url, token: 'token-gate' });
          const errors: unknown[] = [];
          drainer = drainSqlGate(
            gate,
            {
              reportRejection: (rejection, options) => client.reportRejection(rejection, options),
              reportRejectionBatch: (resource, rejections, options) =>
                client.reportRejectionBatch(resource, rejections, options),
              reportFloor: async (_resource, floor) => ({ raised: false, fenceCounter: floor.fence }),
            },
            { onError: (error) => errors.push(error), pollIntervalMillis: 50 },
          );
          await drainer.flush();
          const seqs = Array.from({ length: 20 }, (_, index) => index + 1);
          expect(double.rejections.map((entry) => entry.body.seq)).toEqual(seqs);
          const requests = double.handled.filter((request) => request.route.startsWith('rejections'));
          expect(requests.length).toBeLessThan(20);
          expect(requests.some((request) => request.route === 'rejections-batch')).toBe(true);
          expect(await state()).toMatchObject({ reportedThroughSeq: 20, outbox: [] });
          expect(errors).toEqual([]);
        } finally {
          await drainer?.close();
          await double.close();
        }
      });

      it('keeps a refusal whose report gets 403 (the gate token does not cover the resource) in the outbox, retried, each 403 given to onError, until the token covers it', async () => {
        const double = await openCoordinatorTestDouble({
          tokens: [{ token: 'token-gate', role: 'gate', gateId: 'orders-gate', resources: ['orders-*'] }],
        });
        try {
          await write('agent-2', 5);
          await expect(write('agent-1', 3)).rejects.toBeInstanceOf(StaleFenceError);
          const client = new FenceGateClient({ baseUrl: double.url, token: 'token-gate' });
          // the coordinator's tokens file does not cover the resource for the first 3 reports
          const notCovering = new CoordinatorHttpError(
            403,
            { error: 'forbidden', message: `gate orders-gate may not report for ${RESOURCE}` },
            `report rejection ${RESOURCE}#1`,
          );
          let forbidden = 3;
          const errors: unknown[] = [];
          let stillPending: number[] | undefined;
          drainer = drainSqlGate(
            gate,
            {
              reportRejection: async (rejection, options) => {
                if (forbidden-- > 0) {
                  if (forbidden === 0) stillPending = (await state())?.outbox.map((refusal) => refusal.seq);
                  throw notCovering;
                }
                return client.reportRejection(rejection, options);
              },
              reportFloor: async (_resource, floor) => ({ raised: false, fenceCounter: floor.fence }),
            },
            {
              onError: (error) => errors.push(error),
              pollIntervalMillis: 50,
              retry: { initialDelayMillis: 1, maxDelayMillis: 1 },
            },
          );
          await drainer.flush();
          expect(errors).toEqual([notCovering, notCovering, notCovering]); // the error itself: status 403, body, operation
          expect(stillPending).toEqual([1]);
          expect(drainer.rejections.dropped).toBe(0);
          expect(double.rejections.map((entry) => entry.body.seq)).toEqual([1]);
          expect(await state()).toMatchObject({ reportedThroughSeq: 1, outbox: [] });
        } finally {
          await drainer?.close();
          await double.close();
        }
      });
    });

    it("admits a fence-first handover's fence into the floor row (sqlGateGuard), and refuses an older or double-granted one changing nothing", async () => {
      const guard = sqlGateGuard(gate);
      expect(guard.resource).toBe(RESOURCE);
      await guard.admit({ resource: RESOURCE, holderId: 'agent-2', fence: 4 });
      expect(await db.committedFloor(RESOURCE)).toEqual({ fence: 4, holderId: 'agent-2' });
      await expect(guard.admit({ resource: RESOURCE, holderId: 'agent-1', fence: 3 })).rejects.toBeInstanceOf(
        StaleFenceError,
      );
      await expect(guard.admit({ resource: RESOURCE, holderId: 'agent-1', fence: 4 })).rejects.toBeInstanceOf(
        DoubleGrantError,
      );
      await guard.admit({ resource: RESOURCE, holderId: 'agent-2', fence: 4 }); // a resent admit
      expect(await state()).toMatchObject({ floor: { fence: 4, holderId: 'agent-2' }, nextSeq: 1, outbox: [] });
      // the holder's first write comes after: admitted at the floor's own fence; an older one is refused
      await write('agent-2', 4);
      await expect(write('agent-1', 3)).rejects.toBeInstanceOf(StaleFenceError);
      expect(await db.writes()).toEqual([{ holderId: 'agent-2', fence: 4 }]);
    });

    describe('a database restored from a backup (or whose gate tables were emptied)', () => {
      /** The coordinator double, its agents' grants, and a gate client reading its gate recovery. */
      const openCoordinator = async () => {
        const double = await openCoordinatorTestDouble({
          tokens: [
            { token: 'token-gate', role: 'gate', gateId: 'orders-gate', resources: ['orders-*'] },
            { token: 'token-agent-1', role: 'agent', holderId: 'agent-1' },
            { token: 'token-agent-2', role: 'agent', holderId: 'agent-2' },
          ],
        });
        const call = async (agent: string, route: 'acquire' | 'release', body: object) => {
          const response = await fetch(`${double.url}/v1/leases/${RESOURCE}/${route}`, {
            method: 'POST',
            headers: { authorization: `Bearer token-${agent}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          expect(response.status).toBe(200);
          return (await response.json()) as { grant?: { fence: number; signedToken: string } };
        };
        /** Acquires the resource for `agent`: its fence and signed token. */
        const acquire = async (agent: string) =>
          (await call(agent, 'acquire', { requestId: `${agent}-${String(Math.random())}` })).grant as {
            fence: number;
            signedToken: string;
          };
        const release = (agent: string, fence: number) => call(agent, 'release', { fence });
        const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { jwks: double.keys } });
        return {
          double,
          acquire,
          release,
          verifier,
          client: new FenceGateClient({ baseUrl: double.url, token: 'token-gate' }),
        };
      };
      /** A fenced `writes` row under a signed token the coordinator double granted. */
      const signedWrite = (target: SqlFenceGate<Tx>, holderId: string, grant: { fence: number; signedToken: string }) =>
        fencedTransaction(target, grant.signedToken, (tx) => db.write(tx, holderId, grant.fence));

      it('reconciles with the coordinator before its first write: a superseded token is refused, and its refusal gets a seq the coordinator has not recorded', async () => {
        const { double, acquire, release, verifier, client } = await openCoordinator();
        let drainer: SqlGateDrainer | undefined;
        try {
          const before = db.gate(RESOURCE, { verifier }, client);
          const first = await acquire('agent-1');
          await signedWrite(before, 'agent-1', first);
          // the backup is taken here: floor agent-1 @ first.fence, no refusal yet
          await release('agent-1', first.fence);
          const second = await acquire('agent-2');
          await signedWrite(before, 'agent-2', second);
          await expect(signedWrite(before, 'agent-1', first)).rejects.toBeInstanceOf(StaleFenceError);
          drainer = drainSqlGate(before, client, { pollIntervalMillis: 50 });
          await drainer.flush();
          await drainer.close();
          drainer = undefined;
          expect(double.rejections.map((entry) => entry.body.seq)).toEqual([1]);

          // the operator restores the backup, and the process starts again (a new gate object)
          await db.execute(
            `UPDATE lease_fence_floors SET floor_fence = ${String(first.fence)}, floor_holder_id = 'agent-1', next_seq = 1, reported_through_seq = 0;
             DELETE FROM lease_fence_outbox`,
          );
          const restored = db.gate(RESOURCE, { verifier }, client);
          const writesBefore = await db.writes();
          // agent-1's token was superseded by agent-2's grant: the gate must not admit it
          await expect(signedWrite(restored, 'agent-1', first)).rejects.toBeInstanceOf(StaleFenceError);
          expect(await db.writes()).toEqual(writesBefore);
          drainer = drainSqlGate(restored, client, { pollIntervalMillis: 50 });
          await drainer.flush();
          // the second refusal is recorded as a second refusal, not taken for a resend of the first
          expect(double.rejections.map((entry) => entry.body.seq)).toEqual([1, 2]);
          expect(double.rejections[1]?.body).toMatchObject({
            kind: 'stale',
            rejected: { holderId: 'agent-1', fence: first.fence },
            current: { fence: second.fence },
          });
          // the current holder still writes
          await signedWrite(restored, 'agent-2', second);
          expect((await db.writes()).at(-1)).toEqual({ holderId: 'agent-2', fence: second.fence });
        } finally {
          await drainer?.close();
          await double.close();
        }
      });

      it('runs nothing while the coordinator cannot be asked, and reconciles on a later write', async () => {
        const { double, acquire, verifier, client } = await openCoordinator();
        try {
          const grant = await acquire('agent-1');
          let down = true;
          const flaky: GateRecoverySource = {
            gateRecovery: async (resource, options) => {
              if (down) throw new Error('coordinator unreachable');
              return client.gateRecovery(resource, options);
            },
          };
          const target = db.gate(RESOURCE, { verifier }, flaky);
          let ran = false;
          await expect(
            fencedTransaction(target, grant.signedToken, () => {
              ran = true;
            }),
          ).rejects.toThrow('coordinator unreachable');
          expect(ran).toBe(false);
          expect(await db.committedFloor(RESOURCE)).toBeUndefined();
          down = false;
          await signedWrite(target, 'agent-1', grant);
          expect(await db.committedFloor(RESOURCE)).toEqual({ fence: grant.fence, holderId: 'agent-1' });
        } finally {
          await double.close();
        }
      });
    });

    describe('the admit reports', () => {
      it('reports each fence that raised the floor once, after its transaction committed; never a rolled-back, refused or repeated one', async () => {
        const double = await openCoordinatorTestDouble({
          tokens: [{ token: 'token-gate', role: 'gate', gateId: 'orders-gate', resources: ['orders-*'] }],
        });
        const client = new FenceGateClient({ baseUrl: double.url, token: 'token-gate' });
        /** Each report: its fence, and the floor another reader saw committed when it was sent. */
        const reports: { fence: number; committedFloor: number | undefined }[] = [];
        const errors: unknown[] = [];
        let drainer: SqlGateDrainer | undefined;
        try {
          drainer = drainSqlGate(
            gate,
            {
              reportRejection: (rejection, options) => client.reportRejection(rejection, options),
              // the double has no floor route: a floor report (made at once when the drainer's first
              // read already finds the first write's floor) would fail with 404
              reportFloor: async (_resource, floor) => ({ raised: false, fenceCounter: floor.fence }),
              reportAdmitted: async (token, options) => {
                reports.push({ fence: token.fence, committedFloor: (await db.committedFloor(RESOURCE))?.fence });
                await client.reportAdmitted(token, options);
              },
            },
            { onError: (error) => errors.push(error), pollIntervalMillis: 50 },
          );
          await write('agent-1', 3);
          await write('agent-1', 3); // the same lease's next writes: the floor does not move
          await write('agent-1', 3);
          // a transaction that raised the floor to 5, then rolled back: 5 was never admitted
          await expect(
            fencedTransaction(gate, await grants.grant(RESOURCE, 'agent-3', 5), () => {
              throw new Error('the caller failed');
            }),
          ).rejects.toThrow('the caller failed');
          await expect(write('agent-0', 2)).rejects.toBeInstanceOf(StaleFenceError);
          await expect
            .poll(() => double.handled.filter((request) => request.route === 'admit').length, { timeout: 10_000 })
            .toBe(1);
          await write('agent-2', 4);
          await expect
            .poll(() => double.handled.filter((request) => request.route === 'admit').map((request) => request.body), {
              timeout: 10_000,
            })
            .toEqual([
              { holderId: 'agent-1', fence: 3 },
              { holderId: 'agent-2', fence: 4 },
            ]);
          await write('agent-2', 4);
          await drainer.flush();
          expect(double.handled.filter((request) => request.route === 'admit')).toMatchObject([
            { resource: RESOURCE, status: 202 },
            { resource: RESOURCE, status: 202 },
          ]);
          // each report left after its commit: another connection already saw the raised floor
          expect(reports).toEqual([
            { fence: 3, committedFloor: 3 },
            { fence: 4, committedFloor: 4 },
          ]);
          expect(errors).toEqual([]);
        } finally {
          await drainer?.close();
          await double.close();
        }
      });

      it('a report the coordinator never answers holds up no transaction, and a lost one is not retried', async () => {
        const double = await openCoordinatorTestDouble({
          tokens: [{ token: 'token-gate', role: 'gate', gateId: 'orders-gate', resources: ['orders-*'] }],
        });
        let release = (): void => undefined;
        double.inject({
          route: 'admit',
          kind: 'delay-reply',
          until: new Promise<void>((resolve) => (release = resolve)),
        });
        const client = new FenceGateClient({ baseUrl: double.url, token: 'token-gate', retry: { maxAttempts: 1 } });
        const errors: unknown[] = [];
        const drainer = drainSqlGate(gate, client, { onError: (error) => errors.push(error), pollIntervalMillis: 50 });
        try {
          await write('agent-1', 1);
          // the first report also loads the gate's transport (libs/client/src/recent-connection-fetch.ts):
          // on a loaded machine that alone can outlast expect.poll's default second
          await expect
            .poll(() => double.handled.filter((request) => request.route === 'admit').length, { timeout: 10_000 })
            .toBe(1);
          // the first report is still unanswered: later handovers commit all the same, and are coalesced
          await write('agent-2', 2);
          await write('agent-3', 3);
          expect((await state())?.floor).toEqual({ fence: 3, holderId: 'agent-3' });
          double.inject({ route: 'admit', kind: 'unavailable', times: 1 });
          release();
          await expect.poll(() => errors.length, { timeout: 10_000 }).toBe(1);
          expect(double.handled.filter((request) => request.route === 'admit').map((request) => request.body)).toEqual([
            { holderId: 'agent-1', fence: 1 },
            { holderId: 'agent-3', fence: 3 },
          ]);
        } finally {
          await drainer.close();
          await double.close();
        }
      });
    });

    /** Starts a writer process (testing/writer-child.mjs) with a grant of `fence` to `holderId`. */
    const spawnWriter = async (holderId: string, fence: number, mode: 'hang' | 'hold' | 'once') => {
      const child = spawn(
        process.execPath,
        [
          fileURLToPath(new URL('./writer-child.mjs', import.meta.url)),
          db.child.dialect,
          db.child.target,
          RESOURCE,
          await grants.grant(RESOURCE, holderId, fence),
          holderId,
          String(fence),
          mode,
        ],
        {
          env: { ...process.env, WRITER_JWKS: JSON.stringify(grants.key.jwks) },
          stdio: ['pipe', 'pipe', 'inherit'],
        },
      );
      let output = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => (output += chunk));
      const ended = once(child.stdout, 'end');
      let done = false;
      void ended.then(() => (done = true));
      /** Resolves once the writer printed `line`; rejects if its output ends first. */
      const printed = async (line: string): Promise<string> => {
        while (!output.split('\n').some((printedLine) => printedLine.startsWith(line))) {
          if (done) throw new Error(`the writer's output ended without ${line}: ${JSON.stringify(output)}`);
          await Promise.race([once(child.stdout, 'data'), ended]);
        }
        return output.split('\n').find((printedLine) => printedLine.startsWith(line)) as string;
      };
      /** Rejects when the writer's output ends (it exited) before `until` resolves. */
      const alive = async (until: Promise<void>): Promise<void> => {
        await Promise.race([
          until,
          ended.then(() => Promise.reject(new Error(`the writer exited early: ${JSON.stringify(output)}`))),
        ]);
      };
      return Object.assign(child, { printed, alive });
    };

    it('two writer processes with different fences in parallel transactions never both commit: the older one waits, then is refused', async () => {
      await write('agent-1', 2);
      const newer = await spawnWriter('agent-new', 8, 'hold');
      let older: Awaited<ReturnType<typeof spawnWriter>> | undefined;
      try {
        await newer.printed('inside');
        older = await spawnWriter('agent-old', 7, 'once');
        await older.printed('starting');
        await older.alive(db.waitUntilWriterBlocked());
        newer.stdin.end('commit\n');
        expect(await newer.printed('committed')).toBe('committed');
        expect(await older.printed('refused')).toBe('refused stale-fence');
      } finally {
        newer.kill('SIGKILL');
        older?.kill('SIGKILL');
      }
      expect(await db.writes()).toEqual([
        { holderId: 'agent-1', fence: 2 },
        { holderId: 'agent-new', fence: 8 },
      ]);
      expect(await state()).toMatchObject({
        floor: { fence: 8, holderId: 'agent-new' },
        outbox: [{ seq: 1, rejected: { holderId: 'agent-old', fence: 7 } }],
      });
    }, 90_000);

    it('a writer killed with SIGKILL mid-transaction leaves neither its data nor a raised floor', async () => {
      await write('agent-1', 2);
      const child = await spawnWriter('killed-writer', 50, 'hang');
      try {
        await child.printed('inside');
      } finally {
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }
      await write('agent-3', 3); // admitted: the killed writer's fence 50 never became the floor
      expect(await db.writes()).toEqual([
        { holderId: 'agent-1', fence: 2 },
        { holderId: 'agent-3', fence: 3 },
      ]);
      expect(await state()).toEqual({
        floor: { fence: 3, holderId: 'agent-3' },
        nextSeq: 1,
        reportedThroughSeq: 0,
        outbox: [],
      });
    });
  });
};
