/**
 * The dashboard's filters and legend in Chromium against a real coordinator and the demo's agents
 * (one stack for the suite): "which leases did agent-N hold?" and "which fences a–b?" each in one
 * action (typing the filter), and "what do the colours and shapes mean?" in one (opening the
 * legend). Every count the page shows is checked against a plain scan of `/v1/events` up to the
 * viewed position (not the dashboard's fold), the tables against the same scan, and the dimming on
 * the canvas's pixels and the lane mirror.
 *
 * Screenshots go to `test/e2e/artifacts/`; `UPDATE_SCREENSHOTS=1` also refreshes
 * `docs/dashboard-filters.png` and `docs/dashboard-legend.png`.
 *
 * Without Chromium the suite is skipped with the reason, except with `CI=true`, where it fails
 * (`support/demo-browser-suite.ts`).
 */
import type { RecordedEvent } from '@lease-fence/protocol';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { EventIndex, HolderColors } from '@lease-fence/dashboard-model';
import {
  dashboardUrl,
  openDashboard,
  readCanvasInk,
  readInkOf,
  readSummary,
  waitForSummary,
} from './support/dashboard-page.js';
import {
  isType,
  SKIP_BROWSER_SUITES,
  UI_TIMEOUT_MILLIS,
  useDemoBrowser,
  type RecordedOf,
} from './support/demo-browser-suite.js';
import { createArtifactsDir, screenshot } from './support/screenshots.js';

/** A holder · fence pair as the log names it. */
interface HolderFence {
  readonly holderId: string;
  readonly fence: number;
}

/** Every holder · fence an event names (both sides of a refusal), read straight from its data. */
function namedPairs(recorded: RecordedEvent): HolderFence[] {
  const data = recorded.event.data as Partial<{
    holderId: string;
    fence: number;
    rejected: HolderFence;
    current: HolderFence;
  }>;
  if (data.rejected !== undefined && data.current !== undefined) return [data.rejected, data.current];
  if (data.holderId !== undefined && data.fence !== undefined) return [{ holderId: data.holderId, fence: data.fence }];
  return [];
}

/** What a pair filter matches in `events`, counted by a plain scan of the log. */
function scan(events: readonly RecordedEvent[], matches: (pair: HolderFence) => boolean) {
  const grants = events.filter(isType('LeaseGranted')).filter((e) => matches(e.event.data));
  const rejections = events.filter(isType('FenceRejected')).filter((e) => namedPairs(e).some(matches));
  return {
    leases: grants.length,
    rejections,
    events: events.filter((e) => namedPairs(e).some(matches)).map((e) => e.position),
    resources: new Set([...grants, ...rejections].map((e) => e.event.data.resource)),
  };
}

describe.skipIf(SKIP_BROWSER_SUITES)('the dashboard filters and legend, against the demo', () => {
  const suite = useDemoBrowser(createArtifactsDir);
  let page: Page;
  beforeAll(() => {
    ({ page } = suite);
  });

  /** The holders' colours as the page assigns them: by first appearance in the loaded log. */
  const colourOf = (): ((holderId: string) => string) => {
    const index = new EventIndex();
    for (const recorded of suite.log.events) index.append(recorded);
    const colours = new HolderColors();
    colours.register(index.holderIds());
    return colours.colorOf;
  };

  /**
   * Opens the page as of a position 40 events after the demo's first refusal (a view that no
   * longer changes), with nothing else in the URL.
   */
  const openPinned = async (): Promise<{
    rejection: RecordedOf<'FenceRejected'>;
    events: readonly RecordedEvent[];
  }> => {
    const rejection = await suite.firstRejection(40);
    const position = rejection.position + 40;
    await openDashboard(page, dashboardUrl(suite.stack.url, { at: position }, suite.stack.viewerToken));
    // at least the pinned position: the page loads to the head it first hears, then holds (ingestTarget in apps/dashboard/src/app/navigation.ts), so a head exactly at the pin is held there
    await waitForSummary(
      page,
      (s) => s.connection === 'live' && !s.live && s.position === position && s.loadedPosition >= position,
      `as of position ${position}`,
    );
    return { rejection, events: suite.log.upTo(position) };
  };

  const matchCount = () => page.getByTestId('match-count');

  it('answers "which leases did this agent hold?" in one action: counts, rows and dimmed bars match a scan of /v1/events', async () => {
    // Given: the view as of a position, and the refused holder of the demo's first refusal
    const { rejection, events } = await openPinned();
    const holder = rejection.event.data.rejected.holderId;
    const colours = colourOf();
    const others = [...new Set(events.filter(isType('LeaseGranted')).map((e) => e.event.data.holderId))].filter(
      (id) => id !== holder,
    );
    const expected = scan(events, (pair) => pair.holderId === holder);
    await expect
      .poll(async () => (await readCanvasInk(page, others.map(colours))).pixelsOf.reduce((a, b) => a + b, 0), {
        timeout: UI_TIMEOUT_MILLIS,
      })
      .toBeGreaterThan(0); // other holders' bars are drawn in their colours before filtering

    // When: one action
    await page.getByTestId('filter-holder').fill(holder);

    // Then: the counts beside the filter are the scan's
    await expect
      .poll(() => matchCount().getAttribute('data-leases'), { timeout: UI_TIMEOUT_MILLIS })
      .toBe(String(expected.leases));
    expect(await matchCount().getAttribute('data-rejections')).toBe(String(expected.rejections.length));
    expect(await matchCount().getAttribute('data-events')).toBe(String(expected.events.length));
    expect(await matchCount().innerText()).toContain(
      `${expected.leases} lease${expected.leases === 1 ? '' : 's'} of ${holder}`,
    );
    expect((await readSummary(page)).matches).toMatchObject({
      leases: expected.leases,
      rejections: expected.rejections.length,
      events: expected.events.length,
    });

    // Then: the Rejections table lists exactly the refusals where the holder is refused or the floor
    const table = page.getByTestId('rejections-table');
    expect(await table.getAttribute('aria-rowcount')).toBe(String(expected.rejections.length));
    const rowPositions = (await page
      .getByTestId('rejection-row')
      .evaluateAll((rows) => rows.map((row) => Number(row.getAttribute('data-position'))))) as number[];
    expect(rowPositions.sort((a, b) => a - b)).toEqual(
      expected.rejections
        .map((e) => e.position)
        .slice(-rowPositions.length)
        .sort((a, b) => a - b),
    );
    expect(rowPositions).toContain(rejection.position);

    // Then: the events table lists only events that name the holder
    const eventPositions = (await page
      .getByTestId('event-row')
      .evaluateAll((rows) => rows.map((row) => Number(row.getAttribute('data-position'))))) as number[];
    expect(eventPositions.length).toBeGreaterThan(0);
    expect(eventPositions.filter((p) => !expected.events.includes(p))).toEqual([]);

    // Then: the holder's bars stay in its colour, every other holder's bars are dimmed (no pixel left in their colour)
    await expect
      .poll(async () => (await readCanvasInk(page, others.map(colours))).pixelsOf.reduce((a, b) => a + b, 0), {
        timeout: UI_TIMEOUT_MILLIS,
      })
      .toBe(0);
    expect((await readCanvasInk(page, [colours(holder)])).pixelsOf[0]).toBeGreaterThan(0);
    const mirror = (await page
      .getByTestId('lane-row')
      .evaluateAll((rows) =>
        rows.map((row) => [Number(row.getAttribute('data-bars')), Number(row.getAttribute('data-matching-bars'))]),
      )) as [number, number][];
    const bars = mirror.reduce((sum, [all]) => sum + all, 0);
    const matching = mirror.reduce((sum, [, m]) => sum + m, 0);
    expect(matching).toBeGreaterThan(0);
    expect(matching).toBeLessThan(bars);
    await screenshot(page, 'filters.png', 'dashboard-filters.png');
  }, 150_000);

  it('answers "which fences a–b?" in one action, and hides the lanes with no match in a second', async () => {
    // Given: a fence range ending at the highest fence granted up to the viewed position
    const { events } = await openPinned();
    const highest = Math.max(...events.filter(isType('LeaseGranted')).map((e) => e.event.data.fence));
    const [lo, hi] = [Math.max(1, highest - 4), highest];
    const expected = scan(events, (pair) => pair.fence >= lo && pair.fence <= hi);

    // When: one action
    await page.getByTestId('filter-fence').fill(`${lo}-${hi}`);

    // Then
    await expect
      .poll(() => matchCount().getAttribute('data-leases'), { timeout: UI_TIMEOUT_MILLIS })
      .toBe(String(expected.leases));
    expect(await matchCount().getAttribute('data-rejections')).toBe(String(expected.rejections.length));
    expect(await matchCount().getAttribute('data-events')).toBe(String(expected.events.length));
    expect(await matchCount().innerText()).toContain(`with fences ${lo}–${hi}`);
    expect(await page.getByTestId('lane-count').getAttribute('data-shown')).toBe('3');

    // When: a second action
    await page.getByTestId('filter-hide-unmatched').check();

    // Then: only the lanes with a matching bar or refusal stay, and the link keeps the toggle
    await expect
      .poll(() => page.getByTestId('lane-count').getAttribute('data-shown'), { timeout: UI_TIMEOUT_MILLIS })
      .toBe(String(expected.resources.size));
    const lanes = await page
      .getByTestId('lane-row')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-resource')));
    expect(lanes.sort()).toEqual([...expected.resources].sort());
    expect(new URL(page.url()).searchParams.get('hide')).toBe('1');
    expect(new URL(page.url()).searchParams.get('fence')).toBe(`${lo}-${hi}`);
  }, 150_000);

  it('opens a legend in one action that lists the holders in view with their colours, and the shapes', async () => {
    // Given: the unfiltered view, and the holders whose colour is on the canvas
    const { events } = await openPinned();
    const colours = colourOf();
    const holders = [...new Set(events.filter(isType('LeaseGranted')).map((e) => e.event.data.holderId))];
    const ink = await readCanvasInk(page, holders.map(colours));
    const drawn = holders.filter((_, i) => (ink.pixelsOf[i] ?? 0) > 0);
    expect(drawn.length).toBeGreaterThan(0);

    // When: one action
    await page.getByTestId('legend-toggle').click();

    // Then: every holder drawn is listed, only the log's holders are, each beside a swatch in its colour
    const legend = page.getByTestId('legend');
    await expect.poll(() => legend.count(), { timeout: UI_TIMEOUT_MILLIS }).toBe(1);
    const listed = (await legend
      .getByTestId('legend-holder')
      .evaluateAll((items) => items.map((item) => item.getAttribute('data-holder')))) as string[];
    expect(listed).toEqual(expect.arrayContaining(drawn));
    expect(listed.filter((id) => !holders.includes(id))).toEqual([]);
    for (const holder of listed) {
      const swatch = await readInkOf(legend.locator(`[data-testid="legend-holder"][data-holder="${holder}"] canvas`), [
        colours(holder),
      ]);
      expect(swatch.pixelsOf[0], `pixels of ${holder}'s colour in its legend swatch`).toBeGreaterThan(0);
    }
    const shapes = await legend.getByTestId('legend-shape').allInnerTexts();
    for (const meaning of [
      'released',
      'expired',
      'renewals',
      'coordinator restart',
      'grace',
      'refused stale write',
      'dimmed',
    ])
      expect(shapes.join('\n')).toContain(meaning);
    await screenshot(page, 'legend.png', 'dashboard-legend.png');
  }, 150_000);
});
