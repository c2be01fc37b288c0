import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { foldEvents, type ExposureSummary } from '@lease-fence/dashboard-model';
import { LogBuilder } from '@lease-fence/dashboard-model/testing';
import { describeExposure } from './describe-exposure.js';
import { ExposurePanel, sortExposureRows } from './exposure-panel.js';

/**
 * `slot`: a 340 ms window closed by a gate admit, then an unknown one.
 * `db`: a fence-first handover (0 ms). `queue`: one grant only (no handover).
 */
function log(): LogBuilder {
  const b = new LogBuilder({ ttlMillis: 10_000 });
  b.started();
  b.advance(100).granted('slot', 'agent-a', 1);
  b.advance(100).granted('db', 'agent-a', 2);
  b.advance(100).granted('queue', 'agent-a', 3);
  b.advance(100).released('slot', 'agent-a', 1);
  b.advance(100).granted('slot', 'agent-b', 4);
  b.advance(340).admitted('slot', 'agent-b', 4, 'gate-s');
  b.advance(100).released('slot', 'agent-b', 4);
  b.advance(100).released('db', 'agent-a', 2);
  b.advance(10).reserved('db', 'agent-c', 5);
  b.advance(20).admitted('db', 'agent-c', 5);
  b.granted('db', 'agent-c', 5);
  b.advance(100).granted('slot', 'agent-c', 6);
  b.advance(100).released('slot', 'agent-c', 6);
  return b;
}

const text = (html: string): string => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
const rowsOf = (html: string): string[] => [...html.matchAll(/data-resource="([^"]+)"/g)].map((m) => m[1] as string);

describe('ExposurePanel', () => {
  it('lists each resource with a handover, worst first, with p50 / p99 / max and the counts; unknown is never 0', () => {
    // Arrange
    const state = foldEvents(log().events);

    // Act
    const html = renderToString(<ExposurePanel state={state} live={false} nowMillis={() => 0} />);

    // Assert
    expect(rowsOf(html)).toEqual(['slot', 'db']);
    expect(html).toContain(`data-position="${state.position}"`);
    expect(html).toMatch(
      /data-resource="slot" data-handovers="2" data-measured="1" data-unknown="1" data-open="0" data-fence-first="0" data-p50-millis="340" data-p99-millis="340" data-max-millis="340"/,
    );
    expect(html).toMatch(
      /data-resource="db" data-handovers="1" data-measured="1" data-unknown="0" data-open="0" data-fence-first="1" data-p50-millis="0"/,
    );
    expect(text(html)).toMatch(/Exposure at handovers \( ?3 handovers, 1 unknown, 1 fence-first\)/);
  });

  it('shows the figures as of the position it is given (time travel)', () => {
    // Arrange: only the events before the admit of fence 4
    const events = log().events;
    const admit = events.findIndex((e) => e.event.type === 'FenceAdmitted');
    const state = foldEvents(events.slice(0, admit));

    // Act
    const html = renderToString(<ExposurePanel state={state} live={false} nowMillis={() => 0} />);

    // Assert
    expect(rowsOf(html)).toEqual(['slot']);
    expect(html).toMatch(/data-resource="slot" data-handovers="1" data-measured="0" data-unknown="0" data-open="1"/);
    expect(text(html)).toContain('slot 1 — — — 0 1 0');
  });

  it('says when there is no handover yet', () => {
    const b = new LogBuilder();
    b.started();
    b.granted('slot', 'agent-a', 1);
    const html = renderToString(<ExposurePanel state={foldEvents(b.events)} live={false} nowMillis={() => 0} />);
    expect(html).toContain('data-testid="exposure-empty"');
  });
});

describe('sortExposureRows', () => {
  const row = (resource: string, p50Millis: number | undefined, unknown = 0): ExposureSummary => ({
    resource,
    handovers: 3,
    measured: p50Millis === undefined ? 0 : 2,
    unknown,
    open: 0,
    fenceFirst: 0,
    p50Millis,
    p99Millis: p50Millis,
    maxMillis: p50Millis,
  });
  const rows = [row('a', 10), row('b', undefined, 2), row('c', 500), row('d', 40)];

  it('sorts a number column both ways, rows with no measured window last', () => {
    expect(sortExposureRows(rows, 'p50', true).map((r) => r.resource)).toEqual(['c', 'd', 'a', 'b']);
    expect(sortExposureRows(rows, 'p50', false).map((r) => r.resource)).toEqual(['a', 'd', 'c', 'b']);
    expect(sortExposureRows(rows, 'unknown', true)[0]?.resource).toBe('b');
    expect(sortExposureRows(rows, 'resource', true).map((r) => r.resource)).toEqual(['d', 'c', 'b', 'a']);
  });

  it('puts the worst first by default: longest window, then most unknown', () => {
    expect(sortExposureRows(rows, 'worst', true).map((r) => r.resource)).toEqual(['c', 'd', 'a', 'b']);
  });
});

describe('describeExposure', () => {
  it('names the duration, the evidence and its time; fence-first is 0; unknown and open say so', () => {
    // Arrange
    const state = foldEvents(log().events);
    const slot = state.lanes.get('slot')?.generations ?? [];
    const db = state.lanes.get('db')?.generations ?? [];

    // Act / Assert
    expect(describeExposure(slot[0]!)).toBeUndefined();
    expect(describeExposure(slot[1]!)).toMatch(
      /^exposed 340 ms \(grant → gate admit at \d\d:\d\d:\d\d\.\d{3}Z wall, position 7, gate gate-s\)$/,
    );
    expect(describeExposure(slot[2]!)).toMatch(/^exposure unknown: the generation ended with no gate evidence/);
    expect(describeExposure(db[1]!)).toBe('exposed 0 ms (fence-first: a gate admitted fence 5 before the grant)');
  });
});
