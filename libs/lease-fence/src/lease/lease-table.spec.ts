import { describe, expect, it } from 'vitest';
import { ClockDomainError, ProtocolMisuseError } from '../errors.js';
import { Instant } from '../time/instant.js';
import { LeaseTable, type LeaseTableSnapshot } from './lease-table.js';
import type { LeaseChange } from './outcomes.js';

const t = (millis: number, domain = 'boot-1'): Instant => Instant.of(millis, domain);
const granted = (resource: string, holderId: string, fence: number, requestId = `req-${fence}`): LeaseChange => ({
  type: 'granted',
  lease: { resource, holderId, fence, ttlMillis: 1_000, requestId, grantedAt: t(0), expiresAt: t(1_000) },
});

describe('LeaseTable', () => {
  describe('apply', () => {
    it('makes a granted lease current, raises issuedFence and remembers the grant for retries', () => {
      const table = new LeaseTable();
      table.apply(granted('slot', 'agent-a', 4, 'r1'));
      expect(table.lease('slot')?.fence).toBe(4);
      expect(table.issuedFence).toBe(4);
      expect(table.replayed('agent-a', 'r1')).toEqual({
        holderId: 'agent-a',
        requestId: 'r1',
        resource: 'slot',
        fence: 4,
      });
    });

    it('moves the expiry of a renewed lease and keeps its fence and acquire requestId', () => {
      const table = new LeaseTable();
      table.apply(granted('slot', 'agent-a', 1, 'r1'));
      table.apply({
        type: 'renewed',
        resource: 'slot',
        holderId: 'agent-a',
        fence: 1,
        requestId: 'n1',
        ttlMillis: 2_000,
        expiresAt: t(2_500),
      });
      expect(table.lease('slot')).toMatchObject({ fence: 1, requestId: 'r1', ttlMillis: 2_000, expiresAt: t(2_500) });
    });

    it('removes a released or expired lease', () => {
      const table = new LeaseTable();
      table.apply(granted('a', 'agent-a', 1));
      table.apply(granted('b', 'agent-b', 2));
      table.apply({ type: 'released', resource: 'a', holderId: 'agent-a', fence: 1 });
      table.apply({ type: 'expired', resource: 'b', holderId: 'agent-b', fence: 2 });
      expect([...table.leases()]).toEqual([]);
      expect(table.issuedFence).toBe(2);
    });

    it('refuses a change that does not match the current lease and changes nothing', () => {
      const table = new LeaseTable();
      table.apply(granted('slot', 'agent-a', 1));
      expect(() => table.apply({ type: 'released', resource: 'slot', holderId: 'agent-b', fence: 1 })).toThrow(
        ProtocolMisuseError,
      );
      expect(() => table.apply({ type: 'expired', resource: 'slot', holderId: 'agent-a', fence: 2 })).toThrow(
        ProtocolMisuseError,
      );
      expect(table.lease('slot')?.holderId).toBe('agent-a');
    });

    it('refuses a granted change whose instants are plain numbers, leaving the table empty', () => {
      const table = new LeaseTable();
      const lease = {
        resource: 'slot',
        holderId: 'agent-a',
        fence: 1,
        ttlMillis: 1_000,
        requestId: 'r',
        grantedAt: 0,
        expiresAt: 1_000,
      };
      expect(() => table.apply({ type: 'granted', lease } as unknown as LeaseChange)).toThrow(
        /lease\.grantedAt must be an Instant/,
      );
      expect([...table.leases()]).toEqual([]);
      expect(table.issuedFence).toBe(0);
    });

    it('refuses an unknown change type', () => {
      expect(() => new LeaseTable().apply({ type: 'stolen' } as unknown as LeaseChange)).toThrow(TypeError);
    });
  });

  describe('replay cache', () => {
    it('keeps the last replayCacheSize grants and evicts the oldest first', () => {
      const table = new LeaseTable({ replayCacheSize: 2 });
      table.apply(granted('a', 'agent-a', 1, 'r1'));
      table.apply(granted('b', 'agent-a', 2, 'r2'));
      table.apply(granted('c', 'agent-a', 3, 'r3'));
      expect(table.replayed('agent-a', 'r1')).toBeUndefined();
      expect(table.replayed('agent-a', 'r2')?.fence).toBe(2);
      expect(table.replayed('agent-a', 'r3')?.fence).toBe(3);
    });

    it('keys entries by holder and requestId without separator collisions', () => {
      const table = new LeaseTable();
      table.apply(granted('a', 'ab', 1, 'c'));
      expect(table.replayed('a', 'bc')).toBeUndefined();
      expect(table.replayed('ab', 'c')?.fence).toBe(1);
    });
  });

  describe('remembered releases', () => {
    /** A table of capacity `size` where agent-a was granted and released `count` resources r-1, r-2, … (fences 1, 2, …). */
    const releasing = (size: number, count: number): LeaseTable => {
      const table = new LeaseTable({ replayCacheSize: size });
      for (let fence = 1; fence <= count; fence += 1) {
        table.apply(granted(`r-${fence}`, 'agent-a', fence, `q${fence}`));
        table.apply({ type: 'released', resource: `r-${fence}`, holderId: 'agent-a', fence });
      }
      return table;
    };

    it('remembers who released each of the last replayCacheSize generations, by resource and fence', () => {
      const table = releasing(3, 5);
      expect([1, 2, 3, 4, 5].map((fence) => table.releasedBy(`r-${fence}`, fence))).toEqual([
        undefined,
        undefined,
        'agent-a',
        'agent-a',
        'agent-a',
      ]);
      expect(table.releasedBy('r-4', 5)).toBeUndefined();
      expect(table.releasedBy('r-5', 4)).toBeUndefined();
    });

    it('does not remember a generation that expired, nor the current one', () => {
      const table = new LeaseTable();
      table.apply(granted('a', 'agent-a', 1, 'q1'));
      table.apply({ type: 'expired', resource: 'a', holderId: 'agent-a', fence: 1 });
      table.apply(granted('a', 'agent-b', 2, 'q2'));
      expect(table.releasedBy('a', 1)).toBeUndefined();
      expect(table.releasedBy('a', 2)).toBeUndefined();
    });

    it('remembers nothing with replayCacheSize 0', () => {
      expect(releasing(0, 2).releasedBy('r-2', 2)).toBeUndefined();
    });

    it('carries them oldest first in its snapshot, and a restored table answers the same', () => {
      // Given a table whose ring of 3 releases has wrapped (5 releases)
      const table = releasing(3, 5);
      // When it is restored from its JSON snapshot
      const snapshot = JSON.parse(JSON.stringify(table)) as LeaseTableSnapshot;
      const restored = LeaseTable.fromJSON(snapshot);
      // Then
      expect(snapshot.releaseReplayCache).toEqual(
        [3, 4, 5].map((fence) => ({ resource: `r-${fence}`, holderId: 'agent-a', fence })),
      );
      expect(restored.toJSON()).toEqual(table.toJSON());
      expect([2, 3, 5].map((fence) => restored.releasedBy(`r-${fence}`, fence))).toEqual([
        undefined,
        'agent-a',
        'agent-a',
      ]);
      // And the restored table keeps forgetting the oldest first
      restored.apply(granted('r-6', 'agent-a', 6, 'q6'));
      restored.apply({ type: 'released', resource: 'r-6', holderId: 'agent-a', fence: 6 });
      expect(restored.releasedBy('r-3', 3)).toBeUndefined();
      expect(restored.releasedBy('r-6', 6)).toBe('agent-a');
    });

    it('reads a snapshot written before releases were remembered, starting with none', () => {
      const { releaseReplayCache: _written, ...older } = releasing(3, 2).toJSON();
      const restored = LeaseTable.fromJSON(older);
      expect(restored.releasedBy('r-2', 2)).toBeUndefined();
      expect(restored.highestFence('r-2')).toBe(2);
    });
  });

  describe('highestFence', () => {
    it("is 0 for a resource never granted, and the latest generation's fence after it ends", () => {
      // Arrange
      const table = new LeaseTable();
      // Act
      table.apply(granted('slot', 'agent-a', 1));
      table.apply({ type: 'released', resource: 'slot', holderId: 'agent-a', fence: 1 });
      table.apply(granted('slot', 'agent-b', 2));
      table.apply({ type: 'expired', resource: 'slot', holderId: 'agent-b', fence: 2 });
      table.apply(granted('other', 'agent-a', 3));
      // Assert
      expect(table.highestFence('slot')).toBe(2);
      expect(table.highestFence('other')).toBe(3);
      expect(table.highestFence('never')).toBe(0);
      expect(table.lease('slot')).toBeUndefined();
    });

    it('does not count burned fences for any resource', () => {
      const table = new LeaseTable();
      table.apply(granted('slot', 'agent-a', 1));
      table.burnFence(10);
      expect(table.highestFence('slot')).toBe(1);
    });
  });

  describe('burnFence', () => {
    it('raises issuedFence but never lowers it', () => {
      const table = new LeaseTable({ startFence: 5 });
      table.burnFence(3);
      expect(table.issuedFence).toBe(5);
      table.burnFence(8);
      expect(table.issuedFence).toBe(8);
    });

    it('refuses a negative or fractional fence', () => {
      const table = new LeaseTable();
      expect(() => table.burnFence(-1)).toThrow(RangeError);
      expect(() => table.burnFence(1.5)).toThrow(RangeError);
      expect(table.issuedFence).toBe(0);
    });
  });

  describe('reanchor', () => {
    it('moves a carried lease into the new clock domain, keeping fence and holder', () => {
      const table = new LeaseTable();
      table.apply(granted('slot', 'agent-a', 1));
      table.reanchor('slot', t(900, 'boot-2'));
      const lease = table.lease('slot');
      expect(lease).toMatchObject({
        fence: 1,
        holderId: 'agent-a',
        expiresAt: t(900, 'boot-2'),
        grantedAt: t(-100, 'boot-2'),
      });
    });

    it('refuses a grantedAt in another domain than expiresAt', () => {
      const table = new LeaseTable();
      table.apply(granted('slot', 'agent-a', 1));
      expect(() => table.reanchor('slot', t(900, 'boot-2'), t(0, 'boot-1'))).toThrow(ClockDomainError);
      expect(table.lease('slot')?.expiresAt.domain).toBe('boot-1');
    });

    it('refuses a resource without a current lease', () => {
      expect(() => new LeaseTable().reanchor('slot', t(1))).toThrow(ProtocolMisuseError);
    });
  });

  describe('observeFence', () => {
    it("raises the resource's highest fence and the counter, grants nothing, and never lowers either", () => {
      const table = new LeaseTable();
      table.apply(granted('a', 'agent-a', 1, 'r1'));
      table.observeFence('slot', 57);
      expect([table.highestFence('slot'), table.issuedFence, table.lease('slot')]).toEqual([57, 57, undefined]);
      table.observeFence('slot', 3);
      expect([table.highestFence('slot'), table.issuedFence]).toEqual([57, 57]);
      expect(() => table.observeFence('slot', 0)).toThrow(/observeFence: fence/);
    });
  });

  describe('snapshots', () => {
    it('restores an equal table from a JSON round trip, replay order included', () => {
      const table = new LeaseTable({ startFence: 10, replayCacheSize: 3 });
      table.apply(granted('a', 'agent-a', 11, 'r1'));
      table.apply(granted('b', 'agent-b', 12, 'r2'));
      table.burnFence(20);
      table.apply({
        type: 'renewed',
        resource: 'a',
        holderId: 'agent-a',
        fence: 11,
        requestId: 'n1',
        ttlMillis: 1_000,
        expiresAt: t(5_000),
      });
      const restored = LeaseTable.fromJSON(JSON.parse(JSON.stringify(table)) as LeaseTableSnapshot);
      expect(restored.toJSON()).toEqual(table.toJSON());
      expect(restored.replayedRenewal('agent-a', 'n1')).toEqual({
        holderId: 'agent-a',
        requestId: 'n1',
        resource: 'a',
        fence: 11,
      });
      expect(restored.lease('a')?.expiresAt).toBeInstanceOf(Instant);
      expect(restored.issuedFence).toBe(20);
      expect(restored.replayCacheSize).toBe(3);
    });

    it('keeps the highest fence of a resource whose lease ended across a JSON round trip', () => {
      // Given a resource whose only lease was released, and the replay cache no longer remembers it
      const table = new LeaseTable({ replayCacheSize: 1 });
      table.apply(granted('slot', 'agent-a', 1, 'r1'));
      table.apply({ type: 'released', resource: 'slot', holderId: 'agent-a', fence: 1 });
      table.apply(granted('other', 'agent-b', 2, 'r2'));
      // When it is restored from its snapshot
      const snapshot = JSON.parse(JSON.stringify(table)) as LeaseTableSnapshot;
      const restored = LeaseTable.fromJSON(snapshot);
      // Then it still knows fence 1 was granted on 'slot'
      expect(snapshot.highestFences).toEqual([
        { resource: 'slot', fence: 1 },
        { resource: 'other', fence: 2 },
      ]);
      expect(restored.highestFence('slot')).toBe(1);
      expect(restored.highestFence('other')).toBe(2);
    });

    it('reads a snapshot without highestFences, deriving them from its leases and replay cache', () => {
      // Arrange: the format before highestFences existed
      const legacy: LeaseTableSnapshot = {
        format: 1,
        issuedFence: 9,
        replayCacheSize: 4,
        leases: [
          {
            resource: 'a',
            holderId: 'agent-a',
            fence: 5,
            ttlMillis: 1_000,
            requestId: 'r5',
            grantedAt: { millis: 0, domain: 'boot-1' },
            expiresAt: { millis: 1_000, domain: 'boot-1' },
          },
        ],
        replayCache: [
          { holderId: 'agent-b', requestId: 'r3', resource: 'b', fence: 3 },
          { holderId: 'agent-a', requestId: 'r5', resource: 'a', fence: 5 },
        ],
      };
      // Act
      const restored = LeaseTable.fromJSON(legacy);
      // Assert
      expect([restored.highestFence('a'), restored.highestFence('b'), restored.highestFence('c')]).toEqual([5, 3, 0]);
      expect(restored.issuedFence).toBe(9);
      expect(restored.toJSON().highestFences).toEqual([
        { resource: 'b', fence: 3 },
        { resource: 'a', fence: 5 },
      ]);
    });

    it("raises a highestFences entry below the resource's current lease to that lease's fence", () => {
      const table = new LeaseTable();
      table.apply(granted('a', 'agent-a', 4));
      const restored = LeaseTable.fromJSON({ ...table.toJSON(), highestFences: [{ resource: 'a', fence: 2 }] });
      expect(restored.highestFence('a')).toBe(4);
    });

    it('clones deeply: changes to the clone leave the original alone', () => {
      const table = new LeaseTable();
      table.apply(granted('a', 'agent-a', 1));
      const copy = table.clone();
      copy.apply({ type: 'released', resource: 'a', holderId: 'agent-a', fence: 1 });
      copy.burnFence(50);
      expect(table.lease('a')?.fence).toBe(1);
      expect(table.issuedFence).toBe(1);
    });

    it('refuses a malformed snapshot naming the field', () => {
      const good = new LeaseTable().toJSON();
      expect(() => LeaseTable.fromJSON({ ...good, format: 2 } as unknown as LeaseTableSnapshot)).toThrow(/format/);
      const badLease = {
        ...good,
        leases: [
          {
            resource: 'a',
            holderId: 'x',
            fence: 0,
            ttlMillis: 1,
            requestId: 'r',
            grantedAt: { millis: 0, domain: 'd' },
            expiresAt: { millis: 1, domain: 'd' },
          },
        ],
      };
      expect(() => LeaseTable.fromJSON(badLease)).toThrow(/leases\[0\]\.fence/);
      expect(() => LeaseTable.fromJSON({ ...good, highestFences: {} } as unknown as LeaseTableSnapshot)).toThrow(
        /highestFences/,
      );
      expect(() => LeaseTable.fromJSON({ ...good, renewalReplayCache: {} } as unknown as LeaseTableSnapshot)).toThrow(
        /renewalReplayCache/,
      );
      expect(() =>
        LeaseTable.fromJSON({
          ...good,
          renewalReplayCache: [{ holderId: 'a', requestId: '', resource: 'r', fence: 1 }],
        }),
      ).toThrow(/renewalReplayCache\[0\]\.requestId/);
      expect(() => LeaseTable.fromJSON({ ...good, releaseReplayCache: {} } as unknown as LeaseTableSnapshot)).toThrow(
        /releaseReplayCache/,
      );
      expect(() =>
        LeaseTable.fromJSON({ ...good, releaseReplayCache: [{ resource: 'r', holderId: '', fence: 1 }] }),
      ).toThrow(/releaseReplayCache\[0\]\.holderId/);
      expect(() => LeaseTable.fromJSON({ ...good, highestFences: [{ resource: 'a', fence: 0 }] })).toThrow(
        /highestFences\[0\]\.fence/,
      );
      expect(() => LeaseTable.fromJSON({ ...good, highestFences: [{ resource: '', fence: 1 }] })).toThrow(
        /highestFences\[0\]\.resource/,
      );
    });
  });
});
