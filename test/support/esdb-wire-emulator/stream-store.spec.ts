import { describe, expect, it } from 'vitest';
import { StreamStore, type ProposedEvent } from './stream-store.js';

let ids = 0;
const proposed = (
  type = 'Counted',
  id = `00000000-0000-4000-8000-${String(++ids).padStart(12, '0')}`,
): ProposedEvent => ({
  id,
  type,
  contentType: 'application/json',
  data: Buffer.from('{}'),
  customMetadata: new Uint8Array(),
});
const json = (value: unknown): ProposedEvent => ({
  ...proposed('$metadata'),
  data: Buffer.from(JSON.stringify(value)),
});
const all = { direction: 'forwards', from: 'start', maxCount: 1000n } as const;

describe('StreamStore (emulator storage, a test double)', () => {
  describe('append', () => {
    it('checks the expected state without writing when given no events', () => {
      const store = new StreamStore(() => 0);

      expect(store.append('s', { kind: 'no_stream' }, [])).toEqual({
        ok: true,
        currentRevision: undefined,
        position: undefined,
      });
      expect(store.append('s', { kind: 'stream_exists' }, [])).toEqual({ ok: false, currentRevision: undefined });
      expect(store.read('s', all)).toBeUndefined();
    });

    it('assigns strictly increasing global positions across streams', () => {
      const store = new StreamStore(() => 0);

      const a = store.append('a', { kind: 'any' }, [proposed()]);
      const b = store.append('b', { kind: 'any' }, [proposed(), proposed()]);

      expect(a).toMatchObject({ ok: true, position: 1n });
      expect(b).toMatchObject({ ok: true, currentRevision: 1n, position: 3n });
    });

    it('does not treat new ids after the same expected revision as a retry', () => {
      const store = new StreamStore(() => 0);
      store.append('s', { kind: 'no_stream' }, [proposed()]);

      expect(store.append('s', { kind: 'no_stream' }, [proposed()])).toEqual({ ok: false, currentRevision: 0n });
    });

    it('stamps the creation time in .NET ticks since the Unix epoch', () => {
      const store = new StreamStore(() => 1_700_000_000_123);
      store.append('s', { kind: 'any' }, [proposed()]);

      expect(store.read('s', all)?.[0]?.createdTicks).toBe(17_000_000_001_230_000n);
    });
  });

  describe('metadata streams', () => {
    it('keep only their latest event while their revisions keep counting', () => {
      const store = new StreamStore(() => 0);
      store.append('$$s', { kind: 'any' }, [json({ $maxCount: 5 })]);
      store.append('$$s', { kind: 'any' }, [json({ $maxCount: 2 })]);

      const events = store.read('$$s', all);

      expect(events?.map((e) => e.revision)).toEqual([1n]);
    });

    it('hide events before $tb from reads and subscriptions', () => {
      const store = new StreamStore(() => 0);
      store.append('s', { kind: 'any' }, [proposed(), proposed(), proposed()]);
      store.append('$$s', { kind: 'any' }, [json({ $tb: 2 })]);
      const seen: bigint[] = [];

      store.subscribe('s', undefined, (event) => seen.push(event.revision))();

      expect(store.read('s', all)?.map((e) => e.revision)).toEqual([2n]);
      expect(seen).toEqual([2n]);
    });
  });

  describe('read backwards', () => {
    it('reads from a revision down to the first event', () => {
      const store = new StreamStore(() => 0);
      store.append('s', { kind: 'any' }, [proposed(), proposed(), proposed()]);

      expect(store.read('s', { direction: 'backwards', from: 1n, maxCount: 10n })?.map((e) => e.revision)).toEqual([
        1n,
        0n,
      ]);
      expect(store.read('s', { direction: 'backwards', from: 'end', maxCount: 1n })?.map((e) => e.revision)).toEqual([
        2n,
      ]);
    });
  });

  describe('subscribe', () => {
    it('delivers the stored events after the start revision, then appends, until unsubscribed', () => {
      const store = new StreamStore(() => 0);
      store.append('s', { kind: 'any' }, [proposed(), proposed()]);
      const seen: bigint[] = [];

      const unsubscribe = store.subscribe('s', 0n, (event) => seen.push(event.revision));
      store.append('s', { kind: 'any' }, [proposed()]);
      unsubscribe();
      store.append('s', { kind: 'any' }, [proposed()]);

      expect(seen).toEqual([1n, 2n]);
    });
  });
});
