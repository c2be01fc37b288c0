import { describe, expect, it } from 'vitest';
import { LogBuilder } from './testing/log-builder.js';
import { cloneViewState } from './clone-view-state.js';
import { evolveView } from './evolve-view.js';
import { foldEvents } from './fold-events.js';
import { createViewState, hasLeaseActivity, openGeneration } from './view-state.js';

describe('evolveView', () => {
  describe('a generation of ownership', () => {
    it('starts at the grant, moves its expiry with each renewal and ends at the release', () => {
      // Arrange
      const log = new LogBuilder({ ttlMillis: 10_000 });
      log.started();
      const grant = log.advance(100).granted('slot', 'agent-a', 1);
      log.advance(3_000).renewed('slot', 'agent-a', 1);
      const renewal = log.advance(3_000).renewed('slot', 'agent-a', 1);
      const release = log.advance(1_000).released('slot', 'agent-a', 1);

      // Act
      const state = foldEvents(log.events);

      // Assert
      const [generation] = state.lanes.get('slot')?.generations ?? [];
      expect(generation).toMatchObject({
        holderId: 'agent-a',
        fence: 1,
        requestId: 'req-1',
        end: { kind: 'released' },
      });
      expect(generation?.renewalPositions).toEqual([3, 4]);
      expect(generation?.expiry).toMatchObject({
        source: 'renewed',
        setBy: { position: renewal.position },
        wallMillis: renewal.event.data.wallMillis + 10_000,
      });
      expect(generation?.startWallMillis).toBe(grant.event.data.wallMillis);
      expect(generation?.endWallMillis).toBe(release.event.data.wallMillis);
    });

    it('ends an expired generation at its projected expiry, not at the later LeaseExpired', () => {
      // Arrange
      const log = new LogBuilder({ ttlMillis: 5_000 });
      const grant = log.granted('slot', 'agent-a', 1);
      log.advance(7_500).expired('slot', 'agent-a', 1);

      // Act
      const generation = foldEvents(log.events).lanes.get('slot')?.generations[0];

      // Assert
      expect(generation?.end?.kind).toBe('expired');
      expect(generation?.endWallMillis).toBe(grant.event.data.wallMillis + 5_000);
    });

    it('ends an open generation as superseded when the next grant arrives without an end event', () => {
      // Arrange
      const log = new LogBuilder();
      log.granted('slot', 'agent-a', 1);
      const next = log.advance(2_000).granted('slot', 'agent-b', 2);

      // Act
      const lane = foldEvents(log.events).lanes.get('slot');

      // Assert
      expect(lane?.generations.map((g) => [g.holderId, g.fence, g.end?.kind])).toEqual([
        ['agent-a', 1, 'superseded'],
        ['agent-b', 2, undefined],
      ]);
      expect(lane?.generations[0]?.end?.stamp.position).toBe(next.position);
      expect(openGeneration(lane!)?.fence).toBe(2);
    });
  });

  describe('coordinator restarts', () => {
    it('keeps a carried lease as one generation whose expiry is re-anchored in the new boot', () => {
      // Arrange
      const log = new LogBuilder({ ttlMillis: 10_000 });
      log.started();
      log.granted('slot', 'agent-a', 7);
      log.granted('other', 'agent-b', 8);
      const restart = log.advance(2_000).restart('boot-b', {
        atMillis: 50,
        downMillis: 300,
        carried: [{ resource: 'slot', holderId: 'agent-a', fence: 7 }],
        graceMillis: 7_000,
        recoveredFence: 8,
      });
      log.advance(1_000).renewed('slot', 'agent-a', 7);

      // Act
      const state = foldEvents(log.events);

      // Assert
      const slot = state.lanes.get('slot');
      expect(slot?.generations).toHaveLength(1);
      expect(slot?.generations[0]?.carried).toEqual([{ bootId: 'boot-b', position: restart.position }]);
      expect(slot?.generations[0]?.expiry?.bootId).toBe('boot-b');
      expect(state.lanes.get('other')?.generations[0]?.end).toMatchObject({
        kind: 'not-carried',
        stamp: { position: restart.position },
      });
      expect(state.restarts[0]).toMatchObject({
        recoveredFence: 8,
        droppedLeases: [{ resource: 'other', holderId: 'agent-b', fence: 8 }],
        graceEndWallMillis: restart.event.data.wallMillis + 7_000,
      });
      expect(state.fenceCounter).toBe(8);
    });

    it('does not count the sweep of a lease a restart already dropped as an anomaly', () => {
      // Arrange
      const log = new LogBuilder();
      log.granted('slot', 'agent-a', 1);
      log.restart('boot-b');
      log.expired('slot', 'agent-a', 1);

      // Act
      const state = foldEvents(log.events);

      // Assert
      expect(state.anomalyCount).toBe(0);
      expect(state.lanes.get('slot')?.generations[0]?.end?.kind).toBe('not-carried');
    });
  });

  describe('partial logs', () => {
    it('starts a generation with an unknown grant when a renewal is the first event about it', () => {
      // Arrange
      const log = new LogBuilder({ position: 500 });
      const renewal = log.renewed('slot', 'agent-a', 4);

      // Act
      const generation = foldEvents(log.events).lanes.get('slot')?.generations[0];

      // Assert
      expect(generation).toMatchObject({
        fence: 4,
        granted: undefined,
        requestId: undefined,
        firstSeen: { position: renewal.position },
      });
      expect(generation?.startWallMillis).toBe(renewal.event.data.wallMillis);
    });
  });

  describe('events that do not fit', () => {
    it('records a renewal of an ended generation as an anomaly and changes no lease', () => {
      // Arrange
      const log = new LogBuilder();
      log.granted('slot', 'agent-a', 1);
      log.advance(100).released('slot', 'agent-a', 1);
      const before = structuredClone(foldEvents(log.events).lanes.get('slot'));
      const stray = log.advance(100).renewed('slot', 'agent-a', 1);

      // Act
      const state = foldEvents(log.events);

      // Assert
      expect(state.anomalies).toEqual([
        { position: stray.position, type: 'LeaseRenewed', message: expect.stringContaining('fence 1') },
      ]);
      expect(state.lanes.get('slot')?.generations).toEqual(before?.generations);
    });

    it('records a grant whose fence does not rise above every fence issued as an anomaly', () => {
      // Arrange
      const log = new LogBuilder();
      log.granted('a', 'agent-a', 5);
      log.granted('b', 'agent-b', 5);

      // Act
      const state = foldEvents(log.events);

      // Assert
      expect(state.anomalyCount).toBe(1);
      expect(state.anomalies[0]?.message).toContain('not above the highest fence issued so far (5)');
    });
  });

  describe('positions', () => {
    it('throws a RangeError naming the positions for a repeated event and leaves the state unchanged', () => {
      // Arrange
      const log = new LogBuilder();
      const first = log.granted('slot', 'agent-a', 1);
      const state = foldEvents(log.events);
      const before = structuredClone(state);

      // Act
      const act = (): unknown => evolveView(state, first);

      // Assert
      expect(act).toThrow(RangeError);
      expect(act).toThrow(/evolveView: recorded.position must be an integer above the state's position 1.*got 1/);
      expect(state).toEqual(before);
    });

    it('accepts gaps between positions (an imported slice of a log)', () => {
      // Arrange
      const log = new LogBuilder();
      log.granted('slot', 'agent-a', 1);
      log.skip(40).released('slot', 'agent-a', 1);

      // Act
      const state = foldEvents(log.events, createViewState());

      // Assert
      expect([state.firstPosition, state.position, state.eventCount]).toEqual([1, 42, 2]);
    });
  });

  describe('rejections and admissions', () => {
    it('puts each FenceRejected on its lane and in the global list, in log order', () => {
      // Arrange
      const log = new LogBuilder();
      log.granted('slot', 'agent-a', 1);
      log.advance(12_000).granted('slot', 'agent-b', 2);
      log.admitted('slot', 'agent-b', 2);
      log
        .advance(50)
        .rejected(
          'slot',
          { holderId: 'agent-a', fence: 1 },
          { holderId: 'agent-b', fence: 2 },
          { gateWallMillis: 1_780_000_012_040 },
        );

      // Act
      const state = foldEvents(log.events);

      // Assert
      const lane = state.lanes.get('slot');
      expect(lane?.rejections).toHaveLength(1);
      expect(state.rejections[0]).toMatchObject({
        resource: 'slot',
        gateId: 'gate-1',
        kind: 'stale',
        rejected: { holderId: 'agent-a', fence: 1 },
        current: { holderId: 'agent-b', fence: 2 },
        gateWallMillis: 1_780_000_012_040,
      });
      expect(lane?.admissions).toBe(1);
    });

    it('lists each RejectionsMissing as evidence of lost refusals, in log order, and a copy keeps its own list', () => {
      // Arrange
      const log = new LogBuilder();
      log.granted('slot', 'agent-a', 1);
      log.advance(12_000).granted('slot', 'agent-b', 2);
      const gap = log.advance(50).missing('slot', 3, 7, 'gate-9');
      log.rejected(
        'slot',
        { holderId: 'agent-a', fence: 1 },
        { holderId: 'agent-b', fence: 2 },
        { gateId: 'gate-9', seq: 8 },
      );
      const state = foldEvents(log.events);

      // Act
      const copy = cloneViewState(state);
      evolveView(state, log.missing('slot', 9, 9));

      // Assert
      expect(copy.missingRejections).toEqual([
        {
          stamp: expect.objectContaining({ position: gap.position }),
          resource: 'slot',
          gateId: 'gate-9',
          fromSeq: 3,
          throughSeq: 7,
          reportedSeq: 8,
        },
      ]);
      expect(state.missingRejections.map((m) => [m.fromSeq, m.throughSeq])).toEqual([
        [3, 7],
        [9, 9],
      ]);
      expect(state.counts.RejectionsMissing).toBe(2);
    });
  });
});

describe('hasLeaseActivity', () => {
  it("is false for a log holding only the coordinator's own events, true from the first grant or rejection", () => {
    // Arrange: a fresh coordinator's log, a checkpoint, then a first grant.
    const log = new LogBuilder();
    log.started();
    log.advance(1_000).checkpointed();
    const quiet = foldEvents(log.events);
    log.advance(1_000).granted('deploy-slot-a', 'agent-1', 1);
    const granted = foldEvents(log.events);
    const rejectedOnly = foldEvents([
      new LogBuilder().rejected('a', { holderId: 'h0', fence: 1 }, { holderId: 'h1', fence: 2 }),
    ]);

    // Assert
    expect(quiet.position).toBe(2);
    expect(hasLeaseActivity(quiet)).toBe(false);
    expect(hasLeaseActivity(granted)).toBe(true);
    expect(hasLeaseActivity(rejectedOnly)).toBe(true);
  });
});
