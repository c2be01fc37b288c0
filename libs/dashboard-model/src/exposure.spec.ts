import { describe, expect, it } from 'vitest';
import { cloneViewState } from './clone-view-state.js';
import { evolveView } from './evolve-view.js';
import { exposureSummaries, summarizeExposures } from './exposure.js';
import { foldEvents } from './fold-events.js';
import { LogBuilder } from './testing/log-builder.js';
import type { Lane, ViewState } from './view-state.js';

function lane(state: ViewState, resource = 'slot'): Lane {
  const found = state.lanes.get(resource);
  if (found === undefined) throw new Error(`no lane ${resource}`);
  return found;
}

function exposures(state: ViewState, resource = 'slot') {
  return lane(state, resource).generations.map((g) => g.exposure);
}

/** agent-a holds fence 1 of `slot` and releases it; the next grant is a handover. */
function afterFirstHolder(): LogBuilder {
  const log = new LogBuilder({ ttlMillis: 10_000 });
  log.started();
  log.advance(100).granted('slot', 'agent-a', 1);
  log.advance(1_000).released('slot', 'agent-a', 1);
  return log;
}

describe('exposure windows', () => {
  it('a resource’s first grant is not a handover', () => {
    // Arrange
    const log = new LogBuilder();
    log.started();
    log.granted('slot', 'agent-a', 1);
    log.advance(50).admitted('slot', 'agent-a', 1);

    // Act
    const state = foldEvents(log.events);

    // Assert
    expect(exposures(state)).toEqual([undefined]);
    expect(exposureSummaries(state)).toEqual([]);
  });

  it('runs from the grant to the gate admitting the new fence (monotonic milliseconds)', () => {
    // Arrange
    const log = afterFirstHolder();
    const grant = log.advance(100).granted('slot', 'agent-b', 2);
    log.advance(120).admitted('slot', 'agent-a', 1); // the old floor: not evidence for fence 2
    log.wallMillis += 5_000; // a wall-clock step does not change a same-boot duration
    const admit = log.advance(220).admitted('slot', 'agent-b', 2, 'gate-9');

    // Act
    const state = foldEvents(log.events);

    // Assert
    expect(exposures(state)[1]).toEqual({
      status: 'closed',
      fenceFirst: false,
      evidence: expect.objectContaining({ position: admit.position }),
      evidenceKind: 'admitted',
      gateId: 'gate-9',
      durationMillis: 340,
      endWallMillis: admit.event.data.wallMillis,
    });
    expect(grant.position).toBeLessThan(admit.position);
  });

  it('closes at a refusal whose current fence reached the new fence, or a reported floor above it', () => {
    // Arrange
    const log = afterFirstHolder();
    log.advance(100).granted('slot', 'agent-b', 2);
    log.advance(10).rejected('slot', { holderId: 'agent-a', fence: 1 }, { holderId: 'agent-a', fence: 1 });
    const refusal = log
      .advance(30)
      .rejected('slot', { holderId: 'agent-a', fence: 1 }, { holderId: 'agent-b', fence: 2 });
    log.advance(100).released('slot', 'agent-b', 2);
    log.advance(100).granted('slot', 'agent-c', 3);
    const floor = log.advance(70).floorReported('slot', 'agent-x', 9, 20);

    // Act
    const state = foldEvents(log.events);

    // Assert
    const [, second, third] = exposures(state);
    expect(second).toMatchObject({ status: 'closed', evidenceKind: 'rejected', durationMillis: 40 });
    expect(second?.evidence?.position).toBe(refusal.position);
    expect(third).toMatchObject({ status: 'closed', evidenceKind: 'floor-reported', durationMillis: 70 });
    expect(third?.evidence?.position).toBe(floor.position);
  });

  it('is 0 for a fence-first handover: the gate admitted the fence before the grant', () => {
    // Arrange
    const log = afterFirstHolder();
    log.advance(10).reserved('slot', 'agent-b', 2);
    log.advance(80).admitted('slot', 'agent-b', 2);
    const grant = log.granted('slot', 'agent-b', 2);

    // Act
    const state = foldEvents(log.events);

    // Assert
    expect(exposures(state)[1]).toMatchObject({
      status: 'closed',
      fenceFirst: true,
      durationMillis: 0,
      endWallMillis: grant.event.data.wallMillis,
    });
    expect(summarizeExposures(lane(state))).toMatchObject({ handovers: 1, fenceFirst: 1, maxMillis: 0 });
  });

  it('is open, not 0, while the new generation runs with no evidence', () => {
    // Arrange
    const log = afterFirstHolder();
    log.advance(100).granted('slot', 'agent-b', 2);
    log.advance(500).renewed('slot', 'agent-b', 2);

    // Act
    const state = foldEvents(log.events);

    // Assert
    expect(exposures(state)[1]).toMatchObject({ status: 'open', durationMillis: undefined, endWallMillis: undefined });
    expect(summarizeExposures(lane(state))).toMatchObject({
      handovers: 1,
      open: 1,
      measured: 0,
      p50Millis: undefined,
      maxMillis: undefined,
    });
  });

  it('is unknown when the generation ends (released, superseded, not carried) before any evidence', () => {
    // Arrange
    const log = afterFirstHolder();
    log.advance(100).granted('slot', 'agent-b', 2);
    const release = log.advance(400).released('slot', 'agent-b', 2);
    log.advance(100).granted('slot', 'agent-c', 3);
    log.advance(100).granted('slot', 'agent-a', 4); // supersedes 3
    log.advance(100).restart('boot-2', { carried: [] }); // drops 4
    log.advance(100).admitted('slot', 'agent-a', 4); // too late: 4 had ended

    // Act
    const state = foldEvents(log.events);

    // Assert
    const [, second, third, fourth] = exposures(state);
    expect(second).toMatchObject({
      status: 'unknown',
      durationMillis: undefined,
      endWallMillis: release.event.data.wallMillis,
    });
    expect(third?.status).toBe('unknown');
    expect(fourth?.status).toBe('unknown');
    expect(summarizeExposures(lane(state))).toMatchObject({ handovers: 3, unknown: 3, measured: 0 });
  });

  it('keeps a carried generation open across a restart and measures it by wall time across boots', () => {
    // Arrange
    const log = afterFirstHolder();
    const grant = log.advance(100).granted('slot', 'agent-b', 2);
    log.advance(200).restart('boot-2', { atMillis: 7, carried: [{ resource: 'slot', holderId: 'agent-b', fence: 2 }] });
    const admit = log.advance(300).admitted('slot', 'agent-b', 2);

    // Act
    const state = foldEvents(log.events);

    // Assert
    expect(exposures(state)[1]).toMatchObject({
      status: 'closed',
      durationMillis: admit.event.data.wallMillis - grant.event.data.wallMillis,
    });
  });

  it('a clone keeps the exposure it had while the original folds on', () => {
    // Arrange
    const log = afterFirstHolder();
    log.advance(100).granted('slot', 'agent-b', 2);
    const before = foldEvents(log.events);
    const copy = cloneViewState(before);

    // Act
    evolveView(before, log.advance(60).admitted('slot', 'agent-b', 2));

    // Assert
    expect(exposures(copy)[1]?.status).toBe('open');
    expect(exposures(before)[1]).toMatchObject({ status: 'closed', durationMillis: 60 });
  });

  it('summarises per resource (nearest-rank p50 / p99, max) and lists the worst first', () => {
    // Arrange: `slot` has windows of 30 and 20 ms and one unknown (its first grant is no handover); `db` one of 500 ms.
    const log = new LogBuilder({ ttlMillis: 10_000 });
    log.started();
    let fence = 0;
    for (const millis of [10, 30, 20]) {
      fence += 1;
      log.advance(100).granted('slot', 'agent-a', fence);
      if (fence > 1) log.advance(millis).admitted('slot', 'agent-a', fence);
      log.advance(100).released('slot', 'agent-a', fence);
    }
    fence += 1;
    log.advance(100).granted('slot', 'agent-b', fence);
    log.advance(100).released('slot', 'agent-b', fence);
    log.advance(100).granted('db', 'agent-a', ++fence);
    log.advance(100).granted('db', 'agent-b', ++fence);
    log.advance(500).rejected('db', { holderId: 'agent-a', fence: fence - 1 }, { holderId: 'agent-b', fence });

    // Act
    const rows = exposureSummaries(foldEvents(log.events));

    // Assert
    expect(rows.map((r) => r.resource)).toEqual(['db', 'slot']);
    expect(rows[1]).toEqual({
      resource: 'slot',
      handovers: 3,
      measured: 2,
      unknown: 1,
      open: 0,
      fenceFirst: 0,
      p50Millis: 20, // nearest rank of [20, 30]: the smaller
      p99Millis: 30,
      maxMillis: 30,
    });
    expect(rows[0]).toMatchObject({ handovers: 1, measured: 1, p50Millis: 500, maxMillis: 500 });
  });
});
