import { describe, expect, it } from 'vitest';
import { LogBuilder } from './testing/log-builder.js';
import { contextCaption, investigate } from './investigation.js';
import { ViewHistory } from './view-history.js';

function historyOf(log: LogBuilder): ViewHistory {
  const history = new ViewHistory({ checkpointEvery: 3 });
  log.events.forEach((e) => history.append(e));
  return history;
}

/** agent-a's lease (fence 1) expires, agent-b gets fence 2, the gate is told, agent-a writes late. */
function staleWriteAfterExpiry(): { log: LogBuilder; rejectionPosition: number; admittedPosition: number } {
  const log = new LogBuilder({ ttlMillis: 10_000, wallMillis: Date.UTC(2026, 4, 28, 12, 0, 0) });
  log.started();
  log.advance(1_000).granted('deploy-slot', 'agent-a', 1);
  log.advance(3_000).renewed('deploy-slot', 'agent-a', 1); // expires 12:00:14
  log.advance(11_000).expired('deploy-slot', 'agent-a', 1); // 12:00:15
  log.granted('deploy-slot', 'agent-b', 2);
  const admitted = log.advance(20).admitted('deploy-slot', 'agent-b', 2, 'gate-7');
  const rejection = log
    .advance(1_980)
    .rejected(
      'deploy-slot',
      { holderId: 'agent-a', fence: 1 },
      { holderId: 'agent-b', fence: 2 },
      { gateId: 'gate-7', seq: 3 },
    ); // 12:00:17
  log.advance(500).renewed('deploy-slot', 'agent-b', 2);
  return { log, rejectionPosition: rejection.position, admittedPosition: admitted.position };
}

describe('investigate', () => {
  it('shows both generations, the floor with the admission that set it, and explains a stale write after expiry', () => {
    // Arrange
    const { log, rejectionPosition, admittedPosition } = staleWriteAfterExpiry();

    // Act
    const result = investigate(historyOf(log), rejectionPosition);

    // Assert
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const { investigation } = result;
    expect(investigation.rejected).toMatchObject({ holderId: 'agent-a', fence: 1, end: { kind: 'expired' } });
    expect(investigation.current).toMatchObject({ holderId: 'agent-b', fence: 2, end: undefined });
    expect(investigation.floor).toMatchObject({
      gateId: 'gate-7',
      fence: 2,
      holderId: 'agent-b',
      admitted: { position: admittedPosition },
    });
    expect(investigation.explanation).toBe(
      "agent-a wrote to deploy-slot with fence 1 3.0 s after its lease expired at 12:00:14.000Z; agent-b had held fence 2 since 12:00:15.000Z and gate gate-7's floor was 2 (pushed to the gate by FenceAdmitted at position 6), so the stale write was refused at 12:00:17.000Z.",
    );
    expect(investigation.context.events.map((e) => e.position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(investigation.context.checkpointsOmitted).toBe(0);
    expect(investigation.axis.fromWallMillis).toBeLessThan(investigation.rejected!.startWallMillis);
  });

  it('says when a gate reported the refusal late, with both clocks, and computes no duration from the late record', () => {
    // Arrange: agent-a's lease expires at 12:00:14; the gate refuses its write at 12:00:16 by its own
    // clock while the coordinator is down, and its outbox delivers the refusal at 12:00:40
    const log = new LogBuilder({ ttlMillis: 10_000, wallMillis: Date.UTC(2026, 4, 28, 12, 0, 0) });
    log.started();
    log.advance(4_000).granted('deploy-slot', 'agent-a', 1); // expires 12:00:14
    log.advance(10_000).expired('deploy-slot', 'agent-a', 1);
    log.granted('deploy-slot', 'agent-b', 2);
    const rejection = log
      .advance(26_000)
      .rejected(
        'deploy-slot',
        { holderId: 'agent-a', fence: 1 },
        { holderId: 'agent-b', fence: 2 },
        { gateId: 'gate-7', gateWallMillis: Date.UTC(2026, 4, 28, 12, 0, 16) },
      );

    // Act
    const result = investigate(historyOf(log), rejection.position);

    // Assert: not "26.0 s after its lease expired … refused at 12:00:40", which is the record's time
    expect(result.ok && result.investigation.explanation).toBe(
      "agent-a wrote to deploy-slot with fence 1 after its lease expired at 12:00:14.000Z; agent-b had held fence 2 since 12:00:14.000Z and gate gate-7's floor was 2 (not admitted in the log, so set by a write of agent-b with fence 2), so the stale write was refused. By gate gate-7's own clock it refused the write at 12:00:16.000Z; the coordinator recorded the refusal at 12:00:40.000Z, when the gate's outbox delivered it (a gate keeps the refusals it makes while the coordinator is unreachable and reports them once it is back).",
    );
  });

  it('shows the state as of the rejection, not what the log said later', () => {
    // Arrange
    const { log, rejectionPosition } = staleWriteAfterExpiry();
    log.advance(100).released('deploy-slot', 'agent-b', 2);

    // Act
    const result = investigate(historyOf(log), rejectionPosition);

    // Assert
    expect(result.ok && result.investigation.current?.end).toBeUndefined();
  });

  it('keeps only the requested number of events on each side', () => {
    const { log, rejectionPosition } = staleWriteAfterExpiry();
    const result = investigate(historyOf(log), rejectionPosition, 1);
    expect(result.ok && result.investigation.context.events.map((e) => e.position)).toEqual([
      rejectionPosition - 1,
      rejectionPosition,
      rejectionPosition + 1,
    ]);
  });

  it('counts the uptime checkpoints of a grace period around the refusal instead of listing them', () => {
    // Arrange: a restart's grace period writes a checkpoint every 100 ms; the refusal sits among them
    const log = new LogBuilder({ ttlMillis: 10_000 });
    log.started();
    log.granted('slot', 'agent-a', 1);
    const before = log.advance(50).granted('other', 'agent-c', 2);
    for (let i = 0; i < 30; i += 1) log.advance(100).checkpointed();
    log.expired('slot', 'agent-a', 1);
    log.granted('slot', 'agent-b', 3);
    for (let i = 0; i < 30; i += 1) log.advance(100).checkpointed();
    const rejection = log.rejected('slot', { holderId: 'agent-a', fence: 1 }, { holderId: 'agent-b', fence: 3 });
    for (let i = 0; i < 30; i += 1) log.advance(100).checkpointed();
    const after = log.renewed('slot', 'agent-b', 3);
    const history = historyOf(log);

    // Act
    const result = investigate(history, rejection.position, 3);

    // Assert: three listed events on each side however many checkpoints lie between them
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const { context } = result.investigation;
    expect(context.events.map((e) => e.event.type)).toEqual([
      'LeaseGranted',
      'LeaseExpired',
      'LeaseGranted',
      'FenceRejected',
      'LeaseRenewed',
    ]);
    expect(context.events[0]?.position).toBe(before.position);
    expect(context.events.at(-1)?.position).toBe(after.position);
    expect(context.checkpointsOmitted).toBe(90);
    expect(contextCaption(result.investigation)).toBe(
      'Events around it (±3; 90 uptime checkpoints (CoordinatorCheckpointed) in between not listed)',
    );
  });

  it('names a lease carried across a restart in the explanation', () => {
    // Arrange
    const log = new LogBuilder({ ttlMillis: 10_000 });
    log.started();
    log.granted('slot', 'agent-a', 1);
    log.advance(2_000).restart('boot-b', {
      carried: [{ resource: 'slot', holderId: 'agent-a', fence: 1 }],
      graceMillis: 8_000,
      recoveredFence: 1,
    });
    log.advance(9_000).expired('slot', 'agent-a', 1);
    log.granted('slot', 'agent-b', 2);
    const rejection = log
      .advance(400)
      .rejected('slot', { holderId: 'agent-a', fence: 1 }, { holderId: 'agent-b', fence: 2 });

    // Act
    const result = investigate(historyOf(log), rejection.position);

    // Assert
    expect(result.ok && result.investigation.explanation).toContain(
      'its lease (carried across the restart into boot boot-b) expired',
    );
    expect(result.ok && result.investigation.restarts.map((r) => r.carried?.fence)).toEqual([1]);
  });

  it('explains a double grant when two holders present the same fence', () => {
    // Arrange
    const log = new LogBuilder();
    log.granted('slot', 'agent-b', 4);
    const rejection = log
      .advance(100)
      .rejected('slot', { holderId: 'agent-a', fence: 4 }, { holderId: 'agent-b', fence: 4 }, { kind: 'double-grant' });

    // Act
    const result = investigate(historyOf(log), rejection.position);

    // Assert
    expect(result.ok && result.investigation.explanation).toMatch(
      /^agent-a presented fence 4 for slot at .*the log gives fence 4 to agent-b .*evidence of a double grant, so gate gate-1 refused the write\.$/,
    );
  });

  it('says a position is not in the log, and what is loaded, instead of throwing', () => {
    const { log } = staleWriteAfterExpiry();
    expect(investigate(historyOf(log), 999)).toEqual({
      ok: false,
      reason: 'not-in-log',
      position: 999,
      firstPosition: 1,
      lastPosition: 8,
    });
  });

  it('says when the event at a position is not a rejection', () => {
    const { log } = staleWriteAfterExpiry();
    expect(investigate(historyOf(log), 2)).toEqual({
      ok: false,
      reason: 'not-a-rejection',
      position: 2,
      type: 'LeaseGranted',
    });
  });

  it('throws a RangeError naming contextRadius for a negative radius', () => {
    const { log, rejectionPosition } = staleWriteAfterExpiry();
    expect(() => investigate(historyOf(log), rejectionPosition, -1)).toThrow(
      /investigate: contextRadius must be a non-negative integer \(events\), got -1/,
    );
  });
});
