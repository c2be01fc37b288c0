import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { compileLeaseMatch, currentHolders, foldEvents, synthesizeEvents } from '@lease-fence/dashboard-model';
import { TimeJump } from '../app/time-jump.js';
import { HoldersTable } from './holders-table.js';

/** Counts elements carrying `data-testid="<id>"` in rendered HTML. */
function countTestIds(html: string, id: string): number {
  return html.split(`data-testid="${id}"`).length - 1;
}

describe('HoldersTable', () => {
  // 500 resources, folded to the middle of the log, where many of them are held.
  const events = synthesizeEvents({ seed: 4, resources: 500, generations: 3_000, rejections: 0, restarts: 0 });
  const state = foldEvents(events.slice(0, Math.floor(events.length / 2)));
  const rows = currentHolders(state, state.lastWallMillis ?? 0);

  it('renders only the rows in view of 500 current holders (virtualised), and counts them all', () => {
    // Act
    const html = renderToString(<HoldersTable rows={rows} asOfLabel="now (live)" />);

    // Assert
    expect(rows.length).toBeGreaterThan(100);
    expect(html).toContain(`data-total="${rows.length}"`);
    expect(html).toContain(`Current holders (<!-- -->${rows.length}<!-- -->)`);
    expect(countTestIds(html, 'holder-row')).toBeGreaterThan(0);
    expect(countTestIds(html, 'holder-row')).toBeLessThanOrEqual(20);
  });

  it('marks the sorted column with aria-sort and lists the rows in that order', () => {
    // Act
    const html = renderToString(
      <HoldersTable rows={rows} asOfLabel="now" initialSort={{ key: 'fence', direction: 'descending' }} />,
    );

    // Assert
    expect(html).toMatch(/aria-sort="descending"[^>]*><button[^>]*data-testid="holders-sort-fence"/);
    expect(html.match(/aria-sort="none"/g)).toHaveLength(5);
    const fences = [...html.matchAll(/data-fence="(\d+)"/g)].map((m) => Number(m[1]));
    expect(fences).toEqual([...fences].sort((a, b) => b - a));
    expect(fences[0]).toBe(Math.max(...rows.map((r) => r.fence)));
  });

  it('filters by a resource or holder substring and says how many of all match', () => {
    // Arrange
    const holder = rows[0]!.holderId;
    const matching = rows.filter((r) => r.holderId.includes(holder) || r.resource.includes(holder)).length;

    // Act
    const html = renderToString(<HoldersTable rows={rows} asOfLabel="now" initialFilter={holder} />);

    // Assert
    expect(html).toContain(`Current holders (<!-- -->${matching} of ${rows.length}<!-- -->)`);
    for (const m of html.matchAll(/data-holder="([^"]+)"/g)) expect(m[1]).toContain(holder);
  });

  it("lists only the holders the filter bar's holder · fence match keeps, says how many, and the box narrows them further", () => {
    // Arrange: the filter bar's holder text is one holder's id; the fence range keeps the upper half.
    const holder = rows[0]!.holderId;
    const fences = rows.map((r) => r.fence).sort((a, b) => a - b);
    const fenceMin = fences[Math.floor(fences.length / 2)]!;
    const match = compileLeaseMatch({ holder, fenceMin });
    const matching = rows.filter((r) => r.holderId.toLowerCase().includes(holder.toLowerCase()) && r.fence >= fenceMin);
    const resource = matching[0]!.resource;

    // Act
    const barOnly = renderToString(<HoldersTable rows={rows} asOfLabel="now" match={match} heightPx={100_000} />);
    const withBox = renderToString(
      <HoldersTable rows={rows} asOfLabel="now" match={match} initialFilter={resource} heightPx={100_000} />,
    );
    const inactive = renderToString(<HoldersTable rows={rows} asOfLabel="now" match={compileLeaseMatch({})} />);

    // Assert
    expect(matching.length).toBeGreaterThan(0);
    expect(matching.length).toBeLessThan(rows.length);
    expect(barOnly).toContain(`Current holders (<!-- -->${matching.length} of ${rows.length}<!-- -->)`);
    expect(barOnly).toContain(`data-matched="${matching.length}"`);
    expect(barOnly).toMatch(
      new RegExp(`${matching.length}<!-- --> of <!-- -->${rows.length}<!-- --> holders match the filters`),
    );
    expect([...barOnly.matchAll(/data-resource="([^"]+)"/g)].map((m) => m[1]).sort()).toEqual(
      matching.map((r) => r.resource).sort(),
    );
    expect([...withBox.matchAll(/data-resource="([^"]+)"/g)].map((m) => m[1])).toEqual(
      matching.filter((r) => r.resource.includes(resource)).map((r) => r.resource),
    );
    expect(inactive).not.toContain('data-testid="holders-match-count"');
    expect(inactive).toContain(`Current holders (<!-- -->${rows.length}<!-- -->)`);
  });

  it('shows no rows, only the loading note, while the log is not loaded up to the as-of position', () => {
    // Act: rows of an earlier position are at hand, but the view is of a later one.
    const html = renderToString(
      <HoldersTable rows={rows} asOfLabel="as of position 900" loadingNote="loading the log up to position 900…" />,
    );

    // Assert
    expect(html).toContain('data-testid="holders-loading"');
    expect(countTestIds(html, 'holder-row')).toBe(0);
  });

  it('says so when nobody holds a lease', () => {
    expect(renderToString(<HoldersTable rows={[]} asOfLabel="now" />)).toContain('data-testid="holders-empty"');
  });
});

describe('TimeJump', () => {
  it('names the zone a time without offset is read in, with its offset now', () => {
    // Act
    const html = renderToString(
      <TimeJump
        now={() => Date.parse('2026-12-02T10:00:00Z')}
        timeZone="Europe/Berlin"
        bounds={() => ({ firstPosition: 1, lastPosition: 10, firstWallMillis: 0, lastWallMillis: 1 })}
        onJump={() => undefined}
        at={undefined}
      />,
    );

    // Assert
    expect(html).toContain('local time, Europe/Berlin (UTC+1)');
    expect(html).toContain('data-testid="time-jump-input"');
  });
});
