import type { GatesReply } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import { formatAgo, GATE_STALE_AFTER_MILLIS, gateRows } from './gate-rows.js';
import type { MissingRejectionsView } from './view-state.js';

const resource = (name: string, lastContactMillis: number, floor: { holderId: string; fence: number } | null) => ({
  resource: name,
  floor,
  outboxBacklog: 1,
  refusals: 2,
  invalidTokens: 3,
  reportedAtMillis: lastContactMillis - 5,
  lastContactMillis,
});

const gap = (gateId: string, name: string, fromSeq: number, throughSeq: number): MissingRejectionsView => ({
  stamp: { position: 9, wallMillis: 1, bootId: 'b', atMillis: 1 } as unknown as MissingRejectionsView['stamp'],
  resource: name,
  gateId,
  fromSeq,
  throughSeq,
  reportedSeq: throughSeq + 1,
});

describe('gateRows', () => {
  it("makes one row per gate and resource, with the log's seq gaps of that gate and resource and the age of its last report", () => {
    const reply: GatesReply = {
      nowMillis: 100_000,
      gates: [
        {
          gateId: 'deploy-gate',
          lastContactMillis: 99_000,
          resources: [
            resource('deploy-slot-a', 99_000, { holderId: 'agent-2', fence: 7 }),
            resource('deploy-slot-b', 100_000 - GATE_STALE_AFTER_MILLIS - 1, null),
          ],
        },
      ],
    };
    const missing = [
      gap('deploy-gate', 'deploy-slot-a', 2, 4),
      gap('deploy-gate', 'deploy-slot-a', 9, 9),
      gap('other', 'deploy-slot-b', 1, 1),
    ];

    const rows = gateRows(reply, missing);

    expect(rows).toEqual([
      {
        gateId: 'deploy-gate',
        resource: 'deploy-slot-a',
        floor: { holderId: 'agent-2', fence: 7 },
        outboxBacklog: 1,
        refusals: 2,
        invalidTokens: 3,
        seqGaps: 2,
        missingRefusals: 4,
        lastContactAgoMillis: 1_000,
        stale: false,
      },
      expect.objectContaining({
        resource: 'deploy-slot-b',
        floor: undefined,
        seqGaps: 0,
        lastContactAgoMillis: GATE_STALE_AFTER_MILLIS + 1,
        stale: true,
      }),
    ]);
  });

  it('has no rows when no gate reported', () => {
    expect(gateRows({ nowMillis: 1, gates: [] }, [gap('g', 'r', 1, 1)])).toEqual([]);
  });
});

describe('formatAgo', () => {
  it.each([
    [400, 'just now'],
    [3_200, '3 s ago'],
    [125_000, '2 min ago'],
    [7_300_000, '2 h ago'],
  ])('%i ms → %s', (millis, text) => {
    expect(formatAgo(millis)).toBe(text);
  });
});
