import type { RejectionOutbox } from '@lease-fence/client';
import type { GateStatusBody } from '@lease-fence/protocol';
import { FenceGate } from 'lease-fence';
import { describe, expect, it } from 'vitest';
import { collectGateStatus, startStatusReports } from './gate-status.js';
import { createGateMetrics } from './metrics.js';

/** An outbox holding `pending` unacknowledged refusals. */
const outboxWith = (pending: number): RejectionOutbox =>
  ({
    resource: 'deploy-slot',
    reportedThroughSeq: 0,
    pendingRejections: () => Array.from({ length: pending }, (_, index) => ({ seq: index + 1 })),
    markReported: async () => undefined,
  }) as unknown as RejectionOutbox;

describe('collectGateStatus', () => {
  it('reports the floor, the outbox backlog, every refusal the gate made (its durable seq, also from before a restart), and the invalid tokens its metrics counted', async () => {
    // A gate restored with 4 refusals made before its restart
    const gate = new FenceGate('deploy-slot', { initialFloor: { holderId: 'agent-2', fence: 7 }, initialSeq: 5 });
    const outbox = outboxWith(2);
    const metrics = createGateMetrics('deploy-slot', outbox);
    metrics.refused.inc({ reason: 'stale-fence' }); // counted by the seq, not by this metric
    metrics.refused.inc({ reason: 'invalid-token' }, 2);
    metrics.refused.inc({ reason: 'upstream-timeout' }); // neither

    const status = await collectGateStatus({ gate, outbox, metrics }, 1234);

    expect(status).toEqual({
      resources: [
        {
          resource: 'deploy-slot',
          floor: { holderId: 'agent-2', fence: 7 },
          outboxBacklog: 2,
          refusals: 4,
          invalidTokens: 2,
        },
      ],
      reportedAtMillis: 1234,
    });
  });

  it('reports no floor before the first write or admit', async () => {
    const outbox = outboxWith(0);
    const status = await collectGateStatus(
      { gate: new FenceGate('deploy-slot'), outbox, metrics: createGateMetrics('deploy-slot', outbox) },
      1,
    );

    expect(status.resources[0]).toMatchObject({ floor: null, outboxBacklog: 0, refusals: 0, invalidTokens: 0 });
  });
});

describe('startStatusReports', () => {
  const status: GateStatusBody = {
    resources: [{ resource: 'deploy-slot', floor: null, outboxBacklog: 0, refusals: 0, invalidTokens: 0 }],
    reportedAtMillis: 1,
  };

  it('sends over the gate link when it is open, and posts it when the link is not', async () => {
    let linkOpen = true;
    const overLink: GateStatusBody[] = [];
    const posted: GateStatusBody[] = [];
    const reports = startStatusReports({
      collect: async () => status,
      link: {
        sendStatus: (sent) => {
          if (linkOpen) overLink.push(sent);
          return linkOpen;
        },
      },
      client: { reportStatus: async (sent) => void posted.push(sent) },
      everyMillis: 3_600_000,
    });
    await reports.reportNow(); // after the first report, sent at start

    linkOpen = false;
    await reports.reportNow();
    await reports.stop();

    expect(overLink).toEqual([status, status]);
    expect(posted).toEqual([status]);
  });

  it('passes a failed report to onError and keeps reporting', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const reports = startStatusReports({
      collect: async () => status,
      link: { sendStatus: () => false },
      client: {
        reportStatus: async () => {
          calls += 1;
          if (calls === 1) throw new Error('coordinator down');
        },
      },
      everyMillis: 3_600_000,
      onError: (error) => errors.push(error),
    });

    await reports.reportNow();
    await reports.stop();

    expect(errors).toEqual([new Error('coordinator down')]);
    expect(calls).toBe(2);
  });
});
