import { describe, expect, it } from 'vitest';
import {
  COORDINATOR_EVENT_TYPES,
  CoordinatorEventSchema,
  FenceSchema,
  IdSchema,
  MAX_ID_LENGTH,
  RecordedEventSchema,
} from './index.js';

const stamp = { bootId: 'boot-1', atMillis: 1200.5, wallMillis: 1_764_460_800_000 };
const granted = {
  type: 'LeaseGranted',
  version: 1,
  data: {
    ...stamp,
    resource: 'deploy-slot',
    holderId: 'agent-a',
    fence: 7,
    requestId: 'r-1',
    ttlMillis: 5000,
    expiresAtMillis: 6200.5,
  },
} as const;

describe('CoordinatorEventSchema', () => {
  it('accepts a well-formed LeaseGranted and keeps every field', () => {
    expect(CoordinatorEventSchema.parse(granted)).toEqual(granted);
  });

  it('names the field of a malformed event in the issue path', () => {
    const result = CoordinatorEventSchema.safeParse({ ...granted, data: { ...granted.data, fence: 0 } });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join('.'))).toContain('data.fence');
  });

  it('refuses an unknown event type instead of skipping it', () => {
    expect(CoordinatorEventSchema.safeParse({ type: 'LeaseStolen', version: 1, data: stamp }).success).toBe(false);
  });

  it('refuses an unknown schema version of a known type', () => {
    expect(CoordinatorEventSchema.safeParse({ ...granted, version: 2 }).success).toBe(false);
  });

  it("lists every event type of the design, the checkpoint, the floor report, the missing rejections and fence-first handover's", () => {
    expect([...COORDINATOR_EVENT_TYPES].sort()).toEqual([
      'CoordinatorCheckpointed',
      'CoordinatorStarted',
      'FenceAdmitted',
      'FenceBurned',
      'FenceFloorReported',
      'FenceRejected',
      'FenceReserved',
      'LeaseExpired',
      'LeaseGranted',
      'LeaseReleased',
      'LeaseRenewed',
      'RejectionsMissing',
      'SnapshotTaken',
    ]);
  });
});

describe('RecordedEventSchema', () => {
  it('requires positions to start at 1', () => {
    expect(RecordedEventSchema.safeParse({ position: 0, recordedAtMillis: 1, event: granted }).success).toBe(false);
    expect(RecordedEventSchema.safeParse({ position: 1, recordedAtMillis: 1, event: granted }).success).toBe(true);
  });
});

describe('IdSchema', () => {
  it.each([
    ['', 'must not be empty'],
    [' padded', 'printable ASCII'],
    ['x'.repeat(MAX_ID_LENGTH + 1), `at most ${MAX_ID_LENGTH}`],
    ['tab\there', 'printable ASCII'],
  ])('refuses %j with a message saying why', (value, message) => {
    const result = IdSchema.safeParse(value);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toContain(message);
  });

  it('accepts resource names with slashes and colons', () => {
    expect(IdSchema.parse('repo:web/deploy-slot')).toBe('repo:web/deploy-slot');
  });
});

describe('FenceSchema', () => {
  it('says a fence above the safe-integer range is out of range, not merely non-integer', () => {
    const result = FenceSchema.safeParse(1e20);
    expect(result.error?.issues[0]?.message).toContain('out of range');
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses %s', (value) => {
    expect(FenceSchema.safeParse(value).success).toBe(false);
  });
});
