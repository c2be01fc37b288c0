import { CoordinatorHttpError, CoordinatorUnreachableError, type PendingRejection } from '@lease-fence/client';
import { describe, expect, it } from 'vitest';
import { describeReportFailure } from './report-failures.js';

const refusal: PendingRejection = {
  seq: 1,
  resource: 'deploy-slot',
  kind: 'stale',
  rejected: { holderId: 'agent-a', fence: 3 },
  current: { holderId: 'agent-a', fence: 5 },
  wallMillis: 1_796_288_750_646,
};

describe('describeReportFailure: what the sidecar logs when a refusal report fails', () => {
  it('a seq-conflict (a seq reused, e.g. by a second gate under the same token) is logged as dropped, at error, saying what to check', () => {
    // Arrange: the coordinator already recorded seq 1 of this gate with other content
    const error = new CoordinatorHttpError(
      409,
      {
        ok: false,
        reason: 'seq-conflict',
        message: 'seq 1 of gate "gate-1" on resource "deploy-slot" was already recorded',
      },
      'report rejection deploy-slot#1',
    );

    // Act
    const line = describeReportFailure(error, refusal);

    // Assert: not "not reported yet": the reporter drops it from the outbox and never retries it
    expect(line.level).toBe('error');
    expect(line.message).toMatch(/dropped/);
    expect(line.message).not.toMatch(/not reported yet/);
    expect(line.message).toMatch(/LEASE_FENCE_DATA_DIR/);
  });

  it('a 403 (the gate token does not cover the resource) is logged at error as retried, naming the token to fix', () => {
    const error = new CoordinatorHttpError(403, { ok: false, reason: 'forbidden' }, 'report rejection deploy-slot#1');

    const line = describeReportFailure(error, refusal);

    expect(line).toMatchObject({ level: 'error', retried: true });
    expect(line.message).not.toMatch(/dropped/);
    expect(line.message).toMatch(/LEASE_FENCE_GATE_TOKEN does not cover resource "deploy-slot"/);
    expect(line.message).toMatch(/stays in the outbox/);
  });

  it('an outage is logged at warn as retried: the refusal stays in the outbox', () => {
    const error = new CoordinatorUnreachableError('report rejection deploy-slot#1', 5, new Error('ECONNREFUSED'));

    const line = describeReportFailure(error, refusal);

    expect(line).toEqual({
      level: 'warn',
      retried: true,
      message: 'refusal not reported yet (retried; it stays in the outbox)',
    });
  });
});
