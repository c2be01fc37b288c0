import type { RecordedEvent } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import { decodeRecord, encodeEvents, type StoredEventRecord } from '../codec.js';
import { leaseGranted } from '../testing/event-builders.js';
import { EventLogCorruptError } from './event-log-errors.js';
import { groupIntoPages, readInPages, readRecordPages, type PagedRecordSource } from './paged-read.js';

/** `n` stored grant records at positions 1..n, encoded as an adapter stores them. */
const storedGrants = (n: number): StoredEventRecord[] =>
  encodeEvents(
    'test',
    Array.from({ length: n }, (_, i) => leaseGranted(`resource-${i + 1}`, 'agent-a', i + 1)),
  ).map((encoded, i) => ({
    position: i + 1,
    recordedAtMillis: 0,
    ...encoded,
  }));

/** A source over `records` (positions 1..n, in order) with pages of `pageSize`. */
const sourceOf = (records: readonly StoredEventRecord[], pageSize: number): PagedRecordSource => ({
  readPage: (from, to, limit) => records.filter((r) => r.position >= from && r.position <= to).slice(0, limit),
  decode: decodeRecord,
  ensureOpen: () => undefined,
  pageSize,
});

/** Collects what `iterable` hands over until it ends or throws: the items, then the error (if any). */
async function drain<T>(iterable: AsyncIterable<T>): Promise<{ items: T[]; error: unknown }> {
  const items: T[] = [];
  try {
    for await (const item of iterable) items.push(item);
  } catch (error) {
    return { items, error };
  }
  return { items, error: undefined };
}

const positionsOf = (page: readonly RecordedEvent[]): number[] => page.map((r) => r.position);

async function* oneByOne(records: readonly RecordedEvent[], failAfter?: Error): AsyncGenerator<RecordedEvent> {
  yield* records;
  if (failAfter !== undefined) throw failAfter;
}

describe('readRecordPages', () => {
  it('hands over the decoded records of each stored page, in order, as read does one by one', async () => {
    const source = sourceOf(storedGrants(7), 3);
    const pages = (await drain(readRecordPages('test', { from: 2 }, source))).items;
    expect(pages.map(positionsOf)).toEqual([
      [2, 3, 4],
      [5, 6, 7],
    ]);
    expect(pages.flat()).toEqual((await drain(readInPages('test', { from: 2 }, source))).items);
  });

  it('hands over the records before a corrupt one, then stops with EventLogCorruptError naming its position', async () => {
    // Given a stored log whose fifth record does not match the schema
    const records = storedGrants(7);
    records[4] = { ...records[4]!, data: '{"fence":"five"}' };
    // When it is read in pages of 3
    const { items, error } = await drain(readRecordPages('test', { from: 1 }, sourceOf(records, 3)));
    // Then the first page and the valid part of the second were handed over, then the error
    expect(items.map(positionsOf)).toEqual([[1, 2, 3], [4]]);
    expect(error).toBeInstanceOf(EventLogCorruptError);
    expect(error).toMatchObject({ position: 5 });
  });
});

describe('groupIntoPages', () => {
  const recorded = (n: number): RecordedEvent[] =>
    Array.from({ length: n }, (_, i) => ({
      position: i + 1,
      recordedAtMillis: 0,
      event: leaseGranted(`resource-${i + 1}`, 'agent-a', i + 1),
    }));

  it('groups events into pages of at most pageSize, in order, with no empty page', async () => {
    expect((await drain(groupIntoPages(oneByOne(recorded(5)), 2))).items.map(positionsOf)).toEqual([
      [1, 2],
      [3, 4],
      [5],
    ]);
    expect((await drain(groupIntoPages(oneByOne([]), 2))).items).toEqual([]);
  });

  it('hands over the events read before a failure, then rethrows it', async () => {
    const failure = new EventLogCorruptError({
      position: 4,
      issues: [{ path: 'data', message: 'must be a JSON object' }],
    });
    const { items, error } = await drain(groupIntoPages(oneByOne(recorded(3), failure), 2));
    expect(items.map(positionsOf)).toEqual([[1, 2], [3]]);
    expect(error).toBe(failure);
  });

  it.each([0, 1.5, Number.NaN])('refuses a page size of %s with RangeError naming it', (pageSize) => {
    expect(() => groupIntoPages(oneByOne([]), pageSize)).toThrow(/groupIntoPages: pageSize must be a positive integer/);
  });
});
