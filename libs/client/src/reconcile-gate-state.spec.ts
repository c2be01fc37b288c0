import { DoubleGrantError, FenceGate, StaleFenceError, UNKNOWN_FLOOR_HOLDER } from 'lease-fence';
import { describe, expect, it } from 'vitest';
import { gateOptionsFrom, reconcileGateState, type GateState } from './floor-store.js';

const token = (holderId: string, fence: number) => ({ resource: 'slot', holderId, fence });
const refusal = (seq: number) => ({
  seq,
  resource: 'slot',
  kind: 'stale' as const,
  rejected: { holderId: 'a', fence: 1 },
  current: { holderId: 'b', fence: 2 },
  wallMillis: 1,
});

describe('reconcileGateState: the state a gate starts from once it heard the coordinator', () => {
  it('with an empty data directory, takes the latest grant as its floor and numbers refusals after the last recorded', () => {
    const state = reconcileGateState('slot', undefined, {
      latestGrant: { fence: 7, holderId: 'h7' },
      lastRejectionSeq: 4,
    });

    expect(state).toEqual({ resource: 'slot', floor: { fence: 7, holderId: 'h7' }, nextSeq: 5, reportedThroughSeq: 0 });
    const gate = new FenceGate('slot', gateOptionsFrom(state));
    expect(() => gate.commit(token('h3', 3), () => undefined)).toThrow(StaleFenceError);
    expect(gate.rejections[0]?.seq).toBe(5);
    expect(gate.commit(token('h7', 7), () => 'written')).toBe('written'); // never refuses the latest grant's holder
  });

  it('with a data directory restored from an old backup, raises the floor and the seq but keeps its outbox', () => {
    const saved: GateState = {
      resource: 'slot',
      floor: { fence: 3, holderId: 'h3' },
      nextSeq: 2,
      reportedThroughSeq: 0,
      outbox: [refusal(1)],
    };

    const state = reconcileGateState('slot', saved, { latestGrant: { fence: 7, holderId: 'h7' }, lastRejectionSeq: 6 });

    expect(state).toEqual({
      resource: 'slot',
      floor: { fence: 7, holderId: 'h7' },
      nextSeq: 7,
      reportedThroughSeq: 0,
      outbox: [refusal(1)],
    });
  });

  it('never lowers what it saved: a floor above the coordinator (its log lost fences) and a higher seq stay', () => {
    const saved: GateState = {
      resource: 'slot',
      floor: { fence: 9, holderId: 'h9' },
      nextSeq: 12,
      reportedThroughSeq: 8,
    };

    expect(
      reconcileGateState('slot', saved, { latestGrant: { fence: 7, holderId: 'h7' }, lastRejectionSeq: 3 }),
    ).toEqual(saved);
    expect(reconcileGateState('slot', saved, { latestGrant: undefined, lastRejectionSeq: 0 })).toEqual(saved);
  });

  it("on equal fences keeps the saved holder, unless it is unknown and the coordinator's is known", () => {
    const known: GateState = {
      resource: 'slot',
      floor: { fence: 7, holderId: 'h7' },
      nextSeq: 1,
      reportedThroughSeq: 0,
    };
    const unknown: GateState = { ...known, floor: { fence: 7, holderId: UNKNOWN_FLOOR_HOLDER } };

    expect(
      reconcileGateState('slot', known, { latestGrant: { fence: 7, holderId: undefined }, lastRejectionSeq: 0 }).floor,
    ).toEqual({ fence: 7, holderId: 'h7' });
    expect(
      reconcileGateState('slot', unknown, { latestGrant: { fence: 7, holderId: 'h7' }, lastRejectionSeq: 0 }).floor,
    ).toEqual({ fence: 7, holderId: 'h7' });
  });

  it('a latest grant whose lease ended (holder unknown) refuses every lower fence as stale and its own fence as a possible double grant', () => {
    const state = reconcileGateState('slot', undefined, {
      latestGrant: { fence: 7, holderId: undefined },
      lastRejectionSeq: 0,
    });
    const gate = new FenceGate('slot', gateOptionsFrom(state));

    expect(state.floor).toEqual({ fence: 7, holderId: UNKNOWN_FLOOR_HOLDER });
    expect(() => gate.commit(token('h6', 6), () => undefined)).toThrow(StaleFenceError);
    expect(() => gate.commit(token('h7', 7), () => undefined)).toThrow(DoubleGrantError);
    expect(gate.commit(token('h8', 8), () => 'written')).toBe('written');
  });

  it('a resource never granted and no refusal recorded: the saved state, or none', () => {
    expect(reconcileGateState('slot', undefined, { latestGrant: undefined, lastRejectionSeq: 0 })).toEqual({
      resource: 'slot',
      nextSeq: 1,
      reportedThroughSeq: 0,
    });
  });
});
