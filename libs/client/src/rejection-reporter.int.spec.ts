import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FenceGate, StaleFenceError } from 'lease-fence';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FenceGateClient } from './fence-gate-client.js';
import { openFileFloorStore, type FileFloorStore } from './file-floor-store.js';
import { CoordinatorHttpError } from './errors.js';
import { commitDurably, gateOptionsFrom, type RejectionOutbox } from './floor-store.js';
import { REJECTION_BATCH_MAX_ITEMS } from '@lease-fence/protocol';
import { isFinalRefusal, reportRejections, type RejectionReporter, type RejectionSink } from './rejection-reporter.js';
import { openCoordinatorTestDouble, type CoordinatorTestDouble } from './testing/index.js';

const RESOURCE = 'deploy-slot-a';

describe('reportRejections (from a file store outbox, against the coordinator test double)', () => {
  let double: CoordinatorTestDouble;
  let directory: string;
  let store: FileFloorStore;
  let gate: FenceGate;
  let reporter: RejectionReporter | undefined;
  let errors: unknown[];

  const refuseStaleWrite = async (fence: number): Promise<void> => {
    const write = commitDurably(gate, store, { resource: RESOURCE, holderId: 'agent-1', fence }, async () => 'write', {
      wallClock: () => 1_700_000_000_000 + fence,
    });
    await expect(write).rejects.toBeInstanceOf(StaleFenceError);
  };
  const start = (options: Parameters<typeof reportRejections>[2] = {}): RejectionReporter => {
    const client = new FenceGateClient({
      baseUrl: double.url,
      token: 'token-gate',
      retry: { maxAttempts: 2, initialDelayMillis: 0 },
    });
    reporter = reportRejections(store, client, {
      retry: { initialDelayMillis: 0, maxDelayMillis: 0 },
      onError: (error) => errors.push(error),
      ...options,
    });
    return reporter;
  };
  /** The gate process restarts: a new store and gate from the same file. */
  const restartGate = async (): Promise<void> => {
    await reporter?.close();
    reporter = undefined;
    store = await openFileFloorStore({ path: join(directory, 'slot.floor.json'), resource: RESOURCE });
    gate = new FenceGate(RESOURCE, gateOptionsFrom(await store.load()));
  };
  const reportsOf = (seq: number) =>
    double.handled.filter((request) => request.route === 'rejections' && (request.body as { seq: number }).seq === seq);
  /** The seqs sent, in order, one per refusal (singly or in a batch). */
  const sentSeqs = () => requests().flat();
  /** The seqs of each report request, in order (a single report is `[seq]`). */
  const requests = () =>
    double.handled.flatMap((request) =>
      request.route === 'rejections'
        ? [[(request.body as { seq: number }).seq]]
        : request.route === 'rejections-batch'
          ? [(request.body as { items: { seq: number }[] }).items.map((item) => item.seq)]
          : [],
    );

  beforeEach(async () => {
    errors = [];
    double = await openCoordinatorTestDouble({
      tokens: [{ token: 'token-gate', role: 'gate', gateId: 'deploy-gate', resources: ['deploy-*'] }],
    });
    directory = await mkdtemp(join(tmpdir(), 'reporter-'));
    store = await openFileFloorStore({ path: join(directory, 'slot.floor.json'), resource: RESOURCE });
    gate = new FenceGate(RESOURCE, { initialFloor: { fence: 5, holderId: 'agent-2' } });
  });

  afterEach(async () => {
    await reporter?.close();
    reporter = undefined;
    await double.close();
    await rm(directory, { recursive: true, force: true });
  });

  it('forwards each refused write with both holders, both fences and the wall time of the refusal', async () => {
    // Arrange
    start();

    // Act
    await refuseStaleWrite(3);
    await reporter?.flush();

    // Assert
    expect(double.rejections).toEqual([
      {
        gateId: 'deploy-gate',
        body: {
          seq: 1,
          resource: RESOURCE,
          kind: 'stale',
          rejected: { holderId: 'agent-1', fence: 3 },
          current: { holderId: 'agent-2', fence: 5 },
          wallMillis: 1_700_000_000_003,
        },
      },
    ]);
    expect(store.pendingRejections()).toEqual([]);
  });

  it('resends a report whose reply was lost, and the coordinator records it once', async () => {
    // Arrange: the coordinator records seq 1, but the reply never reaches the gate.
    double.inject({ route: 'rejections', kind: 'drop-reply' });
    start();

    // Act
    await refuseStaleWrite(3);
    await reporter?.flush();

    // Assert
    expect(reportsOf(1).map((request) => request.reply)).toEqual([
      { ok: true, duplicate: false },
      { ok: true, duplicate: true },
    ]);
    expect(double.rejections.map((entry) => entry.body.seq)).toEqual([1]);
    expect(reporter?.reportedThroughSeq).toBe(1);
  });

  it('keeps retrying through a coordinator that is unavailable until a report is acknowledged', async () => {
    // Arrange: more 503s than the client's own attempts, so the reporter itself must retry.
    double.inject({ route: 'rejections', kind: 'unavailable', times: 5 });
    start();

    // Act
    await refuseStaleWrite(4);
    await reporter?.flush();

    // Assert
    expect(reportsOf(1)).toHaveLength(6);
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(double.rejections).toHaveLength(1);
  });

  it('sends refusals in seq order, one request in flight at a time, and never an acknowledged seq again', async () => {
    // Arrange
    start();
    await Promise.all([refuseStaleWrite(3), refuseStaleWrite(4)]);
    await reporter?.flush();

    // Act
    reporter?.notify();
    await refuseStaleWrite(2);
    await reporter?.flush();

    // Assert
    expect(sentSeqs()).toEqual([1, 2, 3]);
  });

  it('resumes from the outbox after the gate process restarts, sending only what was not acknowledged', async () => {
    // Arrange: seq 1 is acknowledged; seqs 2 and 3 are refused while no reporter runs (the coordinator is out of reach).
    start();
    await refuseStaleWrite(3);
    await reporter?.flush();
    await reporter?.close();
    reporter = undefined;
    await refuseStaleWrite(4);
    await refuseStaleWrite(2);

    // Act: the gate process restarts and starts a reporter.
    await restartGate();
    const restarted = start();
    await restarted.flush();

    // Assert
    expect(gate.nextSeq).toBe(4);
    expect(sentSeqs()).toEqual([1, 2, 3]);
    expect(double.rejections.map((entry) => entry.body.rejected.fence)).toEqual([3, 4, 2]);
  });

  it('drops a refusal the coordinator refuses for good, counts it, and goes on with the next', async () => {
    // Arrange: a coordinator that refuses seq 1 as implausible (400) and records seq 2.
    const client = new FenceGateClient({ baseUrl: double.url, token: 'token-gate' });
    const refusingSeqOne: RejectionSink = {
      reportRejection: (rejection, options) =>
        rejection.seq === 1
          ? Promise.reject(
              new CoordinatorHttpError(
                400,
                { error: 'invalid-request', message: 'rejected.fence: never issued' },
                'report rejection',
              ),
            )
          : client.reportRejection(rejection, options),
    };
    reporter = reportRejections(store, refusingSeqOne, { retry: { initialDelayMillis: 0, maxDelayMillis: 0 } });

    // Act
    await refuseStaleWrite(3);
    await refuseStaleWrite(4);
    await reporter?.flush();

    // Assert
    expect(reporter?.dropped).toBe(1);
    expect(double.rejections.map((entry) => entry.body.seq)).toEqual([2]);
    expect(store.pendingRejections()).toEqual([]);
  });

  it('keeps a refusal the coordinator answers 403 (the gate token does not cover the resource) and reports it once the token does', async () => {
    // Arrange: a tokens file that does not cover the resource yet: the first 3 reports get 403
    const client = new FenceGateClient({ baseUrl: double.url, token: 'token-gate' });
    let forbidden = 3;
    const errors: unknown[] = [];
    const notCoveredYet: RejectionSink = {
      reportRejection: (rejection, options) =>
        forbidden-- > 0
          ? Promise.reject(new CoordinatorHttpError(403, { error: 'forbidden' }, 'report rejection'))
          : client.reportRejection(rejection, options),
    };
    reporter = reportRejections(store, notCoveredYet, {
      retry: { initialDelayMillis: 0, maxDelayMillis: 0 },
      onError: (error) => errors.push(error),
    });

    // Act
    await refuseStaleWrite(3);
    await reporter?.flush();

    // Assert: retried, never dropped: the writer was told 409, so the log must get it
    expect(errors).toHaveLength(3);
    expect(reporter?.dropped).toBe(0);
    expect(double.rejections.map((entry) => entry.body.seq)).toEqual([1]);
    expect(store.pendingRejections()).toEqual([]);
  });

  it('finds refusals without being woken, by polling the outbox', async () => {
    // Arrange: an outbox that never announces anything.
    const silent: RejectionOutbox = {
      resource: RESOURCE,
      get reportedThroughSeq() {
        return store.reportedThroughSeq;
      },
      pendingRejections: () => store.pendingRejections(),
      acknowledgeRejections: (seq) => store.acknowledgeRejections(seq),
      onPending: () => () => undefined,
    };
    reporter = reportRejections(silent, new FenceGateClient({ baseUrl: double.url, token: 'token-gate' }), {
      pollIntervalMillis: 5,
    });

    // Act
    await refuseStaleWrite(1);
    await reporter.flush();

    // Assert
    expect(double.rejections).toHaveLength(1);
  });

  it('rejects a pending flush when closed first, and leaves the refusal in the outbox', async () => {
    // Arrange: the coordinator holds the reply; the reporter is stuck on seq 1.
    double.inject({ route: 'rejections', kind: 'delay-reply', until: new Promise(() => undefined) });
    start();
    await refuseStaleWrite(3);
    const flushed = reporter?.flush();

    // Act
    await reporter?.close();

    // Assert
    await expect(flushed).rejects.toThrow(/closed before every rejection was acknowledged/);
    expect(store.pendingRejections().map((entry) => entry.seq)).toEqual([1]);
  });

  it("tells a starting gate the last refusal seq it recorded from it (the double's gate-recovery route, which sidecar tests start against)", async () => {
    // Arrange: two refusals reported
    start();
    await refuseStaleWrite(3);
    await refuseStaleWrite(4);
    await reporter?.flush();
    const client = new FenceGateClient({ baseUrl: double.url, token: 'token-gate' });

    // Act / Assert: nothing was granted through the double, and its seqs are 1 and 2
    expect(await client.gateRecovery(RESOURCE)).toEqual({ latestGrant: undefined, lastRejectionSeq: 2 });
    await expect(client.gateRecovery('other-slot')).rejects.toMatchObject({ status: 403 });
  });
  describe('batches (more than one refusal waiting)', () => {
    /** `count` stale writes refused while no reporter runs (they wait in the outbox). */
    const refuseWhileDown = async (count: number): Promise<void> => {
      for (let index = 0; index < count; index += 1) await refuseStaleWrite(1 + (index % 4));
    };

    it('sends a single waiting refusal at once in its own request, not as a batch', async () => {
      start();
      await refuseStaleWrite(3);
      await reporter?.flush();
      expect(double.handled.map((request) => request.route)).toEqual(['rejections']);
    });

    it('reports a storm that waited through an outage in a few batches: every refusal recorded exactly once, in order', async () => {
      // Arrange: 150 refusals pile up while the gate cannot reach the coordinator, which then answers 503 a while
      await refuseWhileDown(150);
      double.inject({ route: 'rejections-batch', kind: 'unavailable', times: 5 });
      start();

      // Act
      await reporter?.flush();

      // Assert
      const seqs = Array.from({ length: 150 }, (_, index) => index + 1);
      expect(double.rejections.map((entry) => entry.body.seq)).toEqual(seqs);
      expect(sentSeqs().filter((seq, index, all) => all.indexOf(seq) === index)).toEqual(seqs);
      const batches = requests().filter((seqsSent) => seqsSent.length > 1);
      expect(batches.map((batch) => batch.length)).toEqual([
        ...Array<number>(5 + 2).fill(REJECTION_BATCH_MAX_ITEMS),
        150 - 2 * REJECTION_BATCH_MAX_ITEMS,
      ]); // the first one 5 times (503), then the rest
      expect(store.pendingRejections()).toEqual([]);
      expect(reporter?.reportedThroughSeq).toBe(150);
    });

    it('resends a batch whose reply was lost; the coordinator answers its items duplicate and records each once', async () => {
      await refuseWhileDown(5);
      double.inject({ route: 'rejections-batch', kind: 'drop-reply' });
      start();
      await reporter?.flush();
      expect(requests()).toEqual([
        [1, 2, 3, 4, 5],
        [1, 2, 3, 4, 5],
      ]);
      expect(double.handled.at(-1)?.reply).toEqual({
        ok: true,
        items: [1, 2, 3, 4, 5].map(() => ({ ok: true, duplicate: true })),
      });
      expect(double.rejections.map((entry) => entry.body.seq)).toEqual([1, 2, 3, 4, 5]);
    });

    it('keeps every refusal of a batch when the gate is killed with the batch in flight, and the restarted gate reports each once', async () => {
      // Arrange: the coordinator records the batch but holds its reply; the gate process dies meanwhile
      await refuseWhileDown(6);
      let release: () => void = () => undefined;
      double.inject({
        route: 'rejections-batch',
        kind: 'delay-reply',
        until: new Promise<void>((resolve) => (release = resolve)),
      });
      const recorded = double.nextHandled((request) => request.route === 'rejections-batch');
      start();
      await recorded;

      // Act: killed before the reply (nothing acknowledged in the outbox), then restarted
      await reporter?.close();
      release();
      expect(store.pendingRejections().map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5, 6]);
      await restartGate();
      await start().flush();

      // Assert
      expect(double.rejections.map((entry) => entry.body.seq)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(store.pendingRejections()).toEqual([]);
    });

    it('falls back to single reports against a coordinator without the batch route (404), each refusal once, in order', async () => {
      await double.close();
      double = await openCoordinatorTestDouble({
        tokens: [{ token: 'token-gate', role: 'gate', gateId: 'deploy-gate', resources: ['deploy-*'] }],
        rejectionBatches: false,
      });
      await refuseWhileDown(4);
      start();
      await reporter?.flush();
      await refuseWhileDown(3);
      await reporter?.flush();

      expect(double.rejections.map((entry) => entry.body.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(requests()).toEqual([[1], [2], [3], [4], [5], [6], [7]]); // the batch asked once (404, not a handled report)
      expect(errors).toEqual([]);
    });

    it('falls back to single reports when a batch is answered 413 (a body limit below a batch), each refusal once, in order', async () => {
      // Arrange: a coordinator (or a proxy before it) whose body limit refuses any batch
      const client = new FenceGateClient({ baseUrl: double.url, token: 'token-gate' });
      const tooLarge = new CoordinatorHttpError(413, { error: 'payload-too-large' }, 'report rejections');
      const batchSizes: number[] = [];
      const smallBodies: RejectionSink = {
        reportRejection: (rejection, options) => client.reportRejection(rejection, options),
        reportRejectionBatch: (_resource, rejections) => {
          batchSizes.push(rejections.length);
          return Promise.reject(tooLarge);
        },
      };
      await refuseWhileDown(4);
      reporter = reportRejections(store, smallBodies, {
        retry: { initialDelayMillis: 1, maxDelayMillis: 1 },
        onError: (error) => errors.push(error),
      });

      // Act: a first backlog, then another once the reporter has fallen back
      await reporter.flush();
      await refuseWhileDown(3);
      await reporter.flush();

      // Assert: the batch asked once, then single reports only; nothing dropped or doubled
      expect(batchSizes).toEqual([4]);
      expect(double.rejections.map((entry) => entry.body.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(reporter.dropped).toBe(0);
      expect(errors).toEqual([]);
      expect(store.pendingRejections()).toEqual([]);
    });

    it('sends a batch answered 400 again one refusal at a time: the others are recorded, only the impossible one dropped', async () => {
      // Arrange: seq 2 cannot be true for this coordinator; it refuses any batch holding it
      const client = new FenceGateClient({ baseUrl: double.url, token: 'token-gate' });
      const implausible = new CoordinatorHttpError(
        400,
        { error: 'invalid-request', message: 'items.1.current.fence: never issued' },
        'report rejections',
      );
      const batchSizes: number[] = [];
      const singles: number[] = [];
      const refusingSeqTwo: RejectionSink = {
        reportRejection: (rejection, options) => {
          singles.push(rejection.seq);
          return rejection.seq === 2 ? Promise.reject(implausible) : client.reportRejection(rejection, options);
        },
        reportRejectionBatch: (resource, rejections, options) => {
          batchSizes.push(rejections.length);
          return rejections.some((rejection) => rejection.seq === 2)
            ? Promise.reject(implausible)
            : client.reportRejectionBatch(resource, rejections, options);
        },
      };
      await refuseWhileDown(4);
      reporter = reportRejections(store, refusingSeqTwo, {
        retry: { initialDelayMillis: 0, maxDelayMillis: 0 },
        onError: (error) => errors.push(error),
      });

      // Act
      await reporter.flush();

      // Assert
      expect(batchSizes).toEqual([4]);
      expect(singles).toEqual([1, 2, 3, 4]);
      expect(double.rejections.map((entry) => entry.body.seq)).toEqual([1, 3, 4]);
      expect(reporter.dropped).toBe(1);
      expect(errors).toEqual([implausible]);
      expect(store.pendingRejections()).toEqual([]);
    });

    it('drops an item answered seq-conflict and counts it like a 409, recording the others of its batch', async () => {
      const client = new FenceGateClient({ baseUrl: double.url, token: 'token-gate' });
      const conflictOnTwo: RejectionSink = {
        reportRejection: (rejection, options) => client.reportRejection(rejection, options),
        reportRejectionBatch: async (resource, rejections, options) => {
          const outcomes = await client.reportRejectionBatch(
            resource,
            rejections.filter((rejection) => rejection.seq !== 2),
            options,
          );
          return rejections.map((rejection, index) =>
            rejection.seq === 2
              ? { ok: false, reason: 'seq-conflict', message: 'seq 2 was already recorded as …' }
              : outcomes[index - (index > 1 ? 1 : 0)]!,
          );
        },
      };
      await refuseWhileDown(3);
      reporter = reportRejections(store, conflictOnTwo, { onError: (error) => errors.push(error) });

      await reporter.flush();

      expect(double.rejections.map((entry) => entry.body.seq)).toEqual([1, 3]);
      expect(reporter.dropped).toBe(1);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(CoordinatorHttpError);
      expect(isFinalRefusal(errors[0])).toBe(true);
      expect(store.pendingRejections()).toEqual([]);
    });
  });
});
