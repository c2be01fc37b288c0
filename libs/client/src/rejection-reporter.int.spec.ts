import { FenceGate, StaleFenceError, type RejectionRecord } from 'lease-fence';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FenceGateClient } from './fence-gate-client.js';
import { reportRejections, type RejectionReporter } from './rejection-reporter.js';
import { openCoordinatorTestDouble, type CoordinatorTestDouble } from './testing/index.js';

describe('reportRejections (against the coordinator test double)', () => {
  let double: CoordinatorTestDouble;
  let gate: FenceGate;
  let reporter: RejectionReporter | undefined;
  let errors: unknown[];

  const refuseStaleWrite = (fence: number): void => {
    expect(() => gate.commit({ resource: 'deploy-slot-a', holderId: 'agent-1', fence }, () => 'write')).toThrow(StaleFenceError);
  };
  const start = (options: Parameters<typeof reportRejections>[2] = {}): RejectionReporter => {
    const client = new FenceGateClient({ baseUrl: double.url, token: 'token-gate', retry: { maxAttempts: 2, initialDelayMillis: 0 } });
    reporter = reportRejections(gate, client, { retry: { initialDelayMillis: 0, maxDelayMillis: 0 }, onError: (error) => errors.push(error), ...options });
    return reporter;
  };
  const reportsOf = (seq: number) =>
    double.handled.filter((request) => request.route === 'rejections' && (request.body as { seq: number }).seq === seq);

  beforeEach(async () => {
    errors = [];
    double = await openCoordinatorTestDouble({
      tokens: [{ token: 'token-gate', role: 'gate', gateId: 'deploy-gate', resources: ['deploy-*'] }],
    });
    gate = new FenceGate('deploy-slot-a', {
      initialFloor: { fence: 5, holderId: 'agent-2' },
      onRejection: (record: RejectionRecord) => reporter?.notify(record),
    });
  });

  afterEach(async () => {
    await reporter?.close();
    reporter = undefined;
    await double.close();
  });

  it('forwards each refused write with both holders and both fences', async () => {
    // Arrange
    start({ wallClock: () => 1_700_000_000_000 });

    // Act
    refuseStaleWrite(3);
    await reporter?.flush();

    // Assert
    expect(double.rejections).toEqual([
      {
        gateId: 'deploy-gate',
        body: { seq: 1, resource: 'deploy-slot-a', kind: 'stale', rejected: { holderId: 'agent-1', fence: 3 }, current: { holderId: 'agent-2', fence: 5 }, wallMillis: 1_700_000_000_000 },
      },
    ]);
  });

  it('resends a report whose reply was lost, and the coordinator records it once', async () => {
    // Arrange: the coordinator records seq 1, but the reply never reaches the gate.
    double.inject({ route: 'rejections', kind: 'drop-reply' });
    start();

    // Act
    refuseStaleWrite(3);
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
    refuseStaleWrite(4);
    await reporter?.flush();

    // Assert
    expect(reportsOf(1)).toHaveLength(6);
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(double.rejections).toHaveLength(1);
  });

  it('never sends an acknowledged seq again, and sends later rejections in seq order', async () => {
    // Arrange
    start();
    refuseStaleWrite(3);
    refuseStaleWrite(4);
    await reporter?.flush();

    // Act
    reporter?.notify(gate.rejections[0]);
    refuseStaleWrite(2);
    await reporter?.flush();

    // Assert
    expect(reportsOf(1)).toHaveLength(1);
    expect(reportsOf(2)).toHaveLength(1);
    expect(double.handled.filter((request) => request.route === 'rejections').map((request) => (request.body as { seq: number }).seq)).toEqual([1, 2, 3]);
  });

  it('skips rejections already reported before a restart', async () => {
    // Arrange
    refuseStaleWrite(3);
    refuseStaleWrite(4);
    start({ reportedThroughSeq: 1 });

    // Act
    await reporter?.flush();

    // Assert
    expect(double.rejections.map((entry) => entry.body.seq)).toEqual([2]);
  });

  it('finds rejections without notify, by polling the gate', async () => {
    // Arrange: a gate that does not call notify.
    gate = new FenceGate('deploy-slot-a', { initialFloor: { fence: 5, holderId: 'agent-2' } });
    start({ pollIntervalMillis: 5 });

    // Act
    refuseStaleWrite(1);
    await reporter?.flush();

    // Assert
    expect(double.rejections).toHaveLength(1);
  });

  it('rejects a pending flush when closed first', async () => {
    // Arrange: the coordinator holds the reply; the reporter is stuck on seq 1.
    double.inject({ route: 'rejections', kind: 'delay-reply', until: new Promise(() => undefined) });
    start();
    refuseStaleWrite(3);
    const flushed = reporter?.flush();

    // Act
    await reporter?.close();

    // Assert
    await expect(flushed).rejects.toThrow(/closed before every rejection was acknowledged/);
  });
});
