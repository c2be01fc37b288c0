import type { CoordinatorEvent } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import { EventLogCorruptError } from './ports/event-log-errors.js';
import { replayLog } from './recovery.js';
import { coordinatorStarted, leaseGranted } from './testing/event-builders.js';
import { createTestEventLog, createTestEventLogStorage, type TestEventLog } from './testing/test-event-log.js';

/** A boot, then `n` grants of distinct resources at fences 1..n: positions 1..n + 1. */
const history = (n: number): CoordinatorEvent[] => [
  coordinatorStarted({ bootId: 'boot-1' }),
  ...Array.from({ length: n }, (_, i) => leaseGranted(`resource-${i + 1}`, 'agent-a', i + 1, { atMillis: i + 1 })),
];

/** A memory log of `history(n)` whose stored record at `position` has `change` applied to its data. */
async function logWithRecord(
  n: number,
  position: number,
  change: (data: Record<string, unknown>) => unknown,
): Promise<TestEventLog> {
  const log = createTestEventLog(createTestEventLogStorage());
  await log.append(history(n), { expectedVersion: 0 });
  const record = log.storage.records[position - 1]!;
  const data = JSON.parse(record.data as string) as Record<string, unknown>;
  change(data);
  log.storage.records[position - 1] = { ...record, data: JSON.stringify(data) };
  return log;
}

/** The error replay stops with. */
const replayError = async (log: TestEventLog): Promise<EventLogCorruptError> => {
  const error = await replayLog(log).catch((e: unknown) => e);
  if (!(error instanceof EventLogCorruptError)) throw new Error(`expected EventLogCorruptError, got ${String(error)}`);
  return error;
};

// Replay checks each record with a check compiled from the protocol schema and asks zod itself
// only when that check refuses: these pin that a record refused by the schema is still refused,
// with its position and the schema's field path, whether or not the fold reads that field.
describe('replayLog refuses a record the protocol schema refuses, naming its position and field', () => {
  it.each([
    {
      label: 'a wrong type in a field the fold reads (fence as a string)',
      position: 700,
      change: (data: Record<string, unknown>) => (data['fence'] = String(data['fence'])),
      path: 'data.fence',
    },
    {
      label: 'a wrong type in a field no rule reads (wallMillis, display only)',
      position: 700,
      change: (data: Record<string, unknown>) => (data['wallMillis'] = 'noon'),
      path: 'data.wallMillis',
    },
    {
      label: 'an id that breaks the id rule in a field no rule reads (requestId with a trailing space)',
      position: 42,
      change: (data: Record<string, unknown>) => (data['requestId'] = 'q-42 '),
      path: 'data.requestId',
    },
    {
      label: 'a missing field',
      position: 1299,
      change: (data: Record<string, unknown>) => delete data['expiresAtMillis'],
      path: 'data.expiresAtMillis',
    },
  ])('$label', async ({ position, change, path }) => {
    // Given a log of 1 301 events whose grant at `position` is damaged
    const log = await logWithRecord(1300, position, change);
    // When it is replayed
    const error = await replayError(log);
    // Then replay stops there, naming the field as the schema does
    expect(error.position).toBe(position);
    expect(error.issues.map((issue) => issue.path)).toEqual([path]);
  });

  it('accepts a record with an unknown key as the schema does: stripped, never handed to the fold', async () => {
    // Given a grant at position 700 with a key the schema does not know
    const log = await logWithRecord(1300, 700, (data) => {
      data['note'] = 'written by a newer build';
    });
    // When it is replayed and read
    const result = await replayLog(log);
    const read = [];
    for await (const recorded of log.read({ from: 700, limit: 1 })) read.push(recorded);
    // Then it folds, and the event read back is the schema's output, without the key
    expect(result.state.position).toBe(1301);
    expect(read[0]!.event.data).not.toHaveProperty('note');
    expect(read[0]!.event).toEqual(history(1300)[699]);
  });
});
