import type { CoordinatorEvent } from '@lease-fence/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  coordinatorStarted,
  fenceRejected,
  leaseGranted,
  leaseReleased,
  rejectionsMissing,
} from '../testing/event-builders.js';
import { at, foldEvents, given } from '../testing/decider-specification.js';
import type { RecordFenceRejection, RecordFenceRejections, RejectionReportItem } from './commands.js';
import { decide } from './decide.js';
import { evolve } from './evolve.js';
import { cloneState } from './state.js';

// 'slot' had fence 1 (agent-a, released), then fence 2 (agent-b, current).
const history = [
  coordinatorStarted({ atMillis: 0 }),
  leaseGranted('slot', 'agent-a', 1, { atMillis: 1000, requestId: 'req-a', ttlMillis: 10_000 }),
  leaseReleased('slot', 'agent-a', 1, { atMillis: 1100 }),
  leaseGranted('slot', 'agent-b', 2, { atMillis: 1200 }),
];
const item = (seq: number, change: Partial<RejectionReportItem> = {}): RejectionReportItem => ({
  seq,
  kind: 'stale',
  rejected: { holderId: 'agent-a', fence: 1 },
  current: { holderId: 'agent-b', fence: 2 },
  ...change,
});
const batch = (...items: RejectionReportItem[]): RecordFenceRejections => ({
  type: 'RecordFenceRejections',
  gateId: 'gate-1',
  resource: 'slot',
  items,
});

describe('decide RecordFenceRejections (a batch of one gate’s reports of one resource)', () => {
  it('records every new item, in order, as the same reports one by one would', () => {
    given(history)
      .at(at(1500))
      .when(batch(item(1), item(2), item(3)))
      .then({
        events: [1, 2, 3].map((seq) => fenceRejected({ atMillis: 1500, seq })),
        outcome: { ok: true, items: [1, 2, 3].map(() => ({ ok: true, duplicate: false })) },
      });
  });

  it('answers resent items as duplicates with no event, and records the new ones after them', () => {
    given([...history, fenceRejected({ atMillis: 1300, seq: 1 }), fenceRejected({ atMillis: 1300, seq: 2 })])
      .at(at(1500))
      .when(batch(item(1), item(2), item(3)))
      .then({
        events: [fenceRejected({ atMillis: 1500, seq: 3 })],
        outcome: {
          ok: true,
          items: [
            { ok: true, duplicate: true },
            { ok: true, duplicate: true },
            { ok: true, duplicate: false },
          ],
        },
      });
  });

  it('refuses only the item whose recorded seq has other content (seq-conflict), and records the others', () => {
    given([...history, fenceRejected({ atMillis: 1300, seq: 1 })])
      .at(at(1500))
      .when(batch(item(1, { rejected: { holderId: 'agent-x', fence: 1 } }), item(2)))
      .then({
        events: [fenceRejected({ atMillis: 1500, seq: 2 })],
        outcome: {
          ok: true,
          items: [
            { ok: false, reason: 'seq-conflict', message: expect.stringMatching(/^seq 1 of gate "gate-1"/) as string },
            { ok: true, duplicate: false },
          ],
        },
      });
  });

  it('records a gap before an item as missing just before it, and one between two items of the batch', () => {
    given([...history, fenceRejected({ atMillis: 1300, seq: 1 })])
      .at(at(1500))
      .when(batch(item(3), item(4), item(7)))
      .then({
        events: [
          rejectionsMissing(2, 2, { atMillis: 1500 }),
          fenceRejected({ atMillis: 1500, seq: 3 }),
          fenceRejected({ atMillis: 1500, seq: 4 }),
          rejectionsMissing(5, 6, { atMillis: 1500 }),
          fenceRejected({ atMillis: 1500, seq: 7 }),
        ],
        outcome: { ok: true, items: [3, 4, 7].map(() => ({ ok: true, duplicate: false })) },
      });
  });

  it('records a late report of a missing seq without another gap, then the items above it', () => {
    given([...history, rejectionsMissing(1, 2, { atMillis: 1300 }), fenceRejected({ atMillis: 1300, seq: 3 })])
      .at(at(1500))
      .when(batch(item(2), item(4)))
      .then({
        events: [fenceRejected({ atMillis: 1500, seq: 2 }), fenceRejected({ atMillis: 1500, seq: 4 })],
        outcome: { ok: true, items: [2, 4].map(() => ({ ok: true, duplicate: false })) },
      });
  });

  it.each([
    ['a stale fence not below the floor', { rejected: { holderId: 'agent-a', fence: 2 } }, 'rejected.fence'],
    ['a fence never issued', { current: { holderId: 'agent-b', fence: 900_000_000 } }, 'current.fence'],
    ['a wall time after the year 3000', { gateWallMillis: Date.UTC(3000, 0, 1) + 1 }, 'gateWallMillis'],
  ] as const)(
    'refuses the whole batch when one item has %s, naming its index and field, with no event',
    (_what, change, field) => {
      given(history)
        .at(at(1500))
        .when(batch(item(1), item(2), item(3, change)))
        .then({
          events: [],
          outcome: {
            ok: false,
            reason: 'implausible',
            index: 2,
            field,
            message: expect.stringContaining(field) as string,
          },
        });
    },
  );

  it.each([
    ['no items', batch(), /items must be a non-empty array/],
    ['seqs not ascending', batch(item(2), item(2)), /items\[1\]\.seq must be above items\[0\]\.seq 2/],
    ['a malformed item', batch(item(1), item(0)), /items\[1\]\.seq/],
  ])('throws for %s, naming the item', (_what, command, message) => {
    const state = foldEvents(history);
    expect(() => decide(command, state, at(1500))).toThrow(message);
  });

  it('decides any batch exactly as its items sent one by one (same events, same outcomes), when none is implausible', () => {
    const content = fc.constantFrom<Partial<RejectionReportItem>>(
      {},
      { rejected: { holderId: 'agent-x', fence: 1 } },
      { kind: 'double-grant', rejected: { holderId: 'agent-x', fence: 2 } },
    );
    const recordedBefore = fc.uniqueArray(fc.tuple(fc.integer({ min: 1, max: 12 }), content), {
      selector: ([seq]) => seq,
      maxLength: 6,
    });
    const missingBefore = fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined });
    const sent = fc.uniqueArray(fc.tuple(fc.integer({ min: 1, max: 16 }), content), {
      selector: ([seq]) => seq,
      minLength: 1,
      maxLength: 8,
    });
    fc.assert(
      fc.property(recordedBefore, missingBefore, sent, (before, missingThrough, items) => {
        const prior: CoordinatorEvent[] = [...history];
        if (missingThrough !== undefined)
          prior.push(
            rejectionsMissing(1, missingThrough, { atMillis: 1300 }),
            fenceRejected({ atMillis: 1300, seq: missingThrough + 1 }),
          );
        const priorState = foldEvents(prior);
        for (const [seq, change] of before.sort(([a], [b]) => a - b)) {
          const single = decide(
            { ...item(seq, change), type: 'RecordFenceRejection', gateId: 'gate-1', resource: 'slot' },
            priorState,
            at(1300),
          );
          for (const event of single.events) evolve(priorState, event);
        }
        const reports = items.sort(([a], [b]) => a - b).map(([seq, change]) => item(seq, change));

        const batched = decide(batch(...reports), cloneState(priorState), at(1500));

        const sequentialState = cloneState(priorState);
        const events: CoordinatorEvent[] = [];
        const outcomes: unknown[] = [];
        for (const report of reports) {
          const single: RecordFenceRejection = {
            ...report,
            type: 'RecordFenceRejection',
            gateId: 'gate-1',
            resource: 'slot',
          };
          const decided = decide(single, sequentialState, at(1500));
          for (const event of decided.events) evolve(sequentialState, event);
          events.push(...decided.events);
          outcomes.push(decided.outcome);
        }
        expect(batched.events).toEqual(events);
        expect(batched.outcome).toEqual({ ok: true, items: outcomes });
      }),
    );
  });
});
