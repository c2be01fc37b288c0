import { describe, expect, it } from 'vitest';
import { OutcomeCounters } from './outcome-counters.js';

describe('OutcomeCounters', () => {
  it('counts each successful command towards its own total, a recorded fence rejection included', () => {
    // Arrange
    const counters = new OutcomeCounters();

    // Act
    counters.record('AcquireLease', { ok: true });
    counters.record('RenewLease', { ok: true });
    counters.record('ReleaseLease', { ok: true });
    counters.record('RecordFenceRejection', { ok: true });
    counters.record('AdmitFence', { ok: true });
    counters.record('Checkpoint', { ok: true });

    // Assert
    expect(counters.totals()).toEqual({ denials: {}, grants: 1, renewals: 1, releases: 1, rejections: 1, admits: 1 });
  });

  it('counts denials by reason and no success total', () => {
    const counters = new OutcomeCounters();
    counters.record('AcquireLease', { ok: false, reason: 'held' });
    counters.record('AcquireLease', { ok: false, reason: 'held' });
    counters.record('RenewLease', { ok: false, reason: 'expired' });
    expect(counters.totals()).toMatchObject({ denials: { held: 2, expired: 1 }, grants: 0, renewals: 0 });
  });
});
