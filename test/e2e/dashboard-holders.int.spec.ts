/**
 * "Who holds what right now, or at 13:24:40?" in Chromium against a real coordinator and the
 * demo's agents: the page's current-holders table, reached through the time input, is compared
 * at 20 random positions of the log with an independent fold of `/v1/events` (the coordinator's
 * own decider, `support/independent-fold.ts`, not the dashboard's fold), alternating log
 * positions and times (local, `Z`, `+01:00`) in the input. The page runs in Europe/Berlin, so a
 * time without offset is read in a zone other than the machine's UTC.
 *
 * The random positions come from a seed printed in every failure message; set
 * `HOLDERS_SEED=<seed>` to repeat a run. Without Chromium the suite is skipped, except with `CI=true`.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { localFieldsIn } from '@lease-fence/dashboard-model/testing';
import type { RecordedEvent } from '@lease-fence/protocol';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/coordinator-process.js';
import { dashboardUrl, openDashboard, readSummary, waitForSummary } from './support/dashboard-page.js';
import { SKIP_BROWSER_SUITES, UI_TIMEOUT_MILLIS, useDemoBrowser } from './support/demo-browser-suite.js';
import type { DemoStack } from './support/demo-stack.js';
import type { EventLogReader } from './support/event-log-reader.js';
import { foldIndependently, positionAtWall } from './support/independent-fold.js';

const ARTIFACTS_DIR = fileURLToPath(new URL('./artifacts/', import.meta.url));
const UPDATE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';
const TIME_ZONE = 'Europe/Berlin';
const JUMPS = 20;

/** One row of the holders table as the page shows it. */
interface ShownHolder {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  readonly renewals: number;
  readonly heldForMillis: number;
  readonly expiresInMillis: number | undefined;
  /** The row's visible text, cell by cell. */
  readonly cells: readonly string[];
}

/** The calendar fields of an instant in {@link TIME_ZONE}, as the input's local form writes them. */
const localFields = (wallMillis: number): { date: string; time: string } => localFieldsIn(wallMillis, TIME_ZONE);

/** `wallMillis` written as an ISO time with a `+01:00` offset (the same instant as its `Z` form). */
const isoPlusOne = (wallMillis: number): string =>
  new Date(wallMillis + 3_600_000).toISOString().replace('Z', '+01:00');

/** Every row of the holders table (the test's logs have few resources: all rows are rendered). */
const readHolders = async (page: Page): Promise<{ total: number; rows: ShownHolder[] }> => {
  const total = Number(await page.getByTestId('holders-panel').getAttribute('data-total'));
  const rows = await page.getByTestId('holder-row').evaluateAll((elements) =>
    elements.map((element) => {
      const row = element as unknown as {
        getAttribute(name: string): string | null;
        readonly cells: ArrayLike<{ readonly innerText: string }>;
      };
      const number = (name: string): number | undefined => {
        const text = row.getAttribute(name);
        return text === null ? undefined : Number(text);
      };
      return {
        resource: row.getAttribute('data-resource') ?? '',
        holderId: row.getAttribute('data-holder') ?? '',
        fence: number('data-fence') ?? Number.NaN,
        renewals: number('data-renewals') ?? Number.NaN,
        heldForMillis: number('data-held-for-millis') ?? Number.NaN,
        expiresInMillis: number('data-expires-in-millis'),
        cells: Array.from(row.cells, (cell) => cell.innerText.trim()),
      };
    }),
  );
  return { total, rows };
};

/**
 * What the table must show as of `position`, by the independent fold, with durations measured
 * from `asOfWallMillis`.
 */
const expectedHolders = (
  events: readonly RecordedEvent[],
  position: number,
  asOfWallMillis: number,
): Omit<ShownHolder, 'cells'>[] =>
  [...foldIndependently(events.slice(0, position)).holders.values()]
    .map((h) => ({
      resource: h.resource,
      holderId: h.holderId,
      fence: h.fence,
      renewals: h.renewals,
      heldForMillis: asOfWallMillis - h.grantedWallMillis,
      expiresInMillis: h.expiresAtWallMillis - asOfWallMillis,
    }))
    .sort((a, b) => a.resource.localeCompare(b.resource));

describe.skipIf(SKIP_BROWSER_SUITES)('the current-holders table and the time input', () => {
  const suite = useDemoBrowser(() => mkdir(ARTIFACTS_DIR, { recursive: true }).then(() => undefined));
  let stack: DemoStack;
  let log: EventLogReader;
  let page: Page;
  beforeAll(async () => {
    ({ stack, log, page } = suite);
    // The page's zone (not the machine's UTC): a time typed without offset is read in Berlin.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Emulation.setTimezoneOverride', { timezoneId: TIME_ZONE });
  });

  const screenshot = async (name: string, docsName?: string): Promise<void> => {
    await page.screenshot({ path: join(ARTIFACTS_DIR, name) });
    if (UPDATE_SCREENSHOTS && docsName !== undefined)
      await page.screenshot({ path: join(REPO_ROOT, 'docs', docsName) });
  };

  /** Types `text` into the time input and presses Enter: the two actions of a jump. */
  const jump = async (text: string): Promise<void> => {
    await page.getByTestId('time-jump-input').fill(text);
    await page.getByTestId('time-jump-input').press('Enter');
  };

  /** Opens the live dashboard and waits until it has loaded the log as read just before. */
  const openLive = async (): Promise<void> => {
    await openDashboard(page, dashboardUrl(stack.url, {}, stack.viewerToken));
    const head = await log.refresh();
    await waitForSummary(page, (s) => s.connection === 'live' && s.loadedPosition >= head, `live at ${head}`);
  };

  it(`at ${JUMPS} random positions, jumped to with the time input, the holders table equals an independent fold of /v1/events`, async () => {
    // Given: a log with the demo's handovers and refusals in it, and random positions of it.
    await suite.firstRejection(60);
    await openLive();
    const events = log.upTo(log.head);
    const seed = Number(process.env.HOLDERS_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const positions = fc.sample(fc.integer({ min: 1, max: events.length }), { seed, numRuns: JUMPS });
    const checked = new Set<string>();

    for (const [i, target] of positions.entries()) {
      // When: the input gets a position (#n, seq n) or the time of that event (local, Z, +01:00).
      const wallMillis = events[target - 1]?.event.data.wallMillis ?? Number.NaN;
      const { date, time } = localFields(wallMillis);
      const forms = [
        `#${target}`,
        `${date} ${time}`,
        `seq ${target}`,
        new Date(wallMillis).toISOString(),
        isoPlusOne(wallMillis),
      ];
      const text = forms[i % forms.length] ?? '';
      const byTime = !text.startsWith('#') && !text.startsWith('seq');
      // A time names the last event recorded at or before it: several may share a millisecond.
      const position = byTime ? positionAtWall(events, wallMillis) : target;
      const context = `seed ${seed} (HOLDERS_SEED=${seed} repeats it), jump ${i + 1} of ${JUMPS}: "${text}" → position ${position}`;
      await jump(text);
      await waitForSummary(page, (s) => !s.live && s.position === position, context, {
        timeoutMillis: UI_TIMEOUT_MILLIS,
      });

      // Then: the table lists exactly the fold's current leases, with the same figures.
      const asOfWallMillis = byTime ? wallMillis : (events[position - 1]?.event.data.wallMillis ?? Number.NaN);
      const shown = await readHolders(page);
      expect((await readSummary(page)).position, context).toBe(position);
      expect(shown.rows.length, `${context}: every row rendered`).toBe(shown.total);
      const expected = expectedHolders(events, position, asOfWallMillis);
      expect(
        shown.rows.map(({ cells: _cells, ...row }) => row).sort((a, b) => a.resource.localeCompare(b.resource)),
        context,
      ).toEqual(expected);
      for (const row of shown.rows) {
        expect(row.cells.slice(0, 3), context).toEqual([row.resource, row.holderId, String(row.fence)]);
        expect(row.cells[5], context).toBe(String(row.renewals));
        expect(row.cells[4], context).toMatch(/^(in .* \(projected\)|expired at .* \(projected; not logged yet\))/);
      }
      checked.add(expected.map((h) => `${h.resource}:${h.fence}`).join(','));
    }
    // The positions were not all alike: the check compared several different sets of holders.
    expect(checked.size, `seed ${seed}`).toBeGreaterThan(1);
  }, 300_000);

  it('answers "who held deploy-slot-a at 13:24:40" by typing the time and pressing Enter, and refuses bad input in place', async () => {
    // Given: the page paused at the log's start while the log grows on, and a time of day (whole
    // seconds, as a person types it) after every event the page has loaded at which, by the
    // independent fold, someone held deploy-slot-a. Paused, the page stops loading, so it must load
    // on to answer (CI once saw this time refused as "after the last event", the loaded one).
    await openLive();
    await jump('#1');
    await waitForSummary(page, (s) => !s.live && s.position === 1, 'paused at #1');
    const loaded = (await readSummary(page)).loadedPosition;
    const heldAt = (events: readonly RecordedEvent[], atSecond: number) => {
      const position = positionAtWall(events, atSecond);
      const truth = foldIndependently(events.slice(0, position)).holders.get('deploy-slot-a');
      return truth === undefined ? undefined : { events, atSecond, position, truth };
    };
    const held = await log.waitUntil(
      () => {
        const events = log.upTo(log.head);
        const lastLoadedWallMillis = events[loaded - 1]?.event.data.wallMillis ?? Number.POSITIVE_INFINITY;
        const seconds = new Set(events.slice(loaded).map((e) => Math.floor(e.event.data.wallMillis / 1_000) * 1_000));
        for (const atSecond of seconds) {
          if (atSecond <= lastLoadedWallMillis) continue;
          const found = heldAt(events, atSecond);
          if (found !== undefined) return found;
        }
        return undefined;
      },
      { description: `a whole second after position ${loaded} at which deploy-slot-a is held` },
    );
    const { events, atSecond, position, truth } = held;
    const { date, time } = localFields(atSecond);
    const today = localFields(Date.now()).date;
    const text = date === today ? time.slice(0, 8) : `${date} ${time.slice(0, 8)}`;

    // When: two actions — type, Enter.
    let actions = 0;
    await page.getByTestId('time-jump-input').fill(text);
    actions += 1;
    await page.getByTestId('time-jump-input').press('Enter');
    actions += 1;

    // Then: the table answers, and the field says which zone it read the time in.
    await waitForSummary(page, (s) => !s.live && s.position === position, `as of ${text} (position ${position})`);
    expect(actions).toBeLessThanOrEqual(2);
    await expect
      .poll(() => page.getByTestId('time-jump-note').innerText(), { timeout: UI_TIMEOUT_MILLIS })
      .toContain(`read as local time, ${TIME_ZONE} (UTC+1)`);
    const row = page.locator('[data-testid="holder-row"][data-resource="deploy-slot-a"]');
    expect(await row.getAttribute('data-holder'), `who held deploy-slot-a at ${text}`).toBe(truth.holderId);
    expect(Number(await row.getAttribute('data-fence'))).toBe(truth.fence);
    await screenshot('holders.png', 'dashboard-holders.png');

    // And: sorting by fence marks the column, and the filter keeps matching rows only.
    await page.getByTestId('holders-sort-fence').click();
    await expect
      .poll(() => page.locator('th', { has: page.getByTestId('holders-sort-fence') }).getAttribute('aria-sort'))
      .toBe('ascending');
    await page.getByTestId('holders-filter').fill('slot-a');
    await expect.poll(() => page.getByTestId('holder-row').evaluateAll((rows) => rows.length)).toBe(1);

    // And: invalid input and a time before the log are named in place and change nothing.
    for (const [bad, message] of [
      ['25:61', /Hour 25 is not 0–23/],
      [`#${log.head + 1_000_000}`, /is after the last event/],
      [isoPlusOne((events[0]?.event.data.wallMillis ?? 0) - 3_600_000), /is before the first event/],
    ] as const) {
      await jump(bad);
      await expect.poll(() => page.getByTestId('time-jump-error').innerText()).toMatch(message);
      expect((await readSummary(page)).position, `after "${bad}"`).toBe(position);
    }

    // And: back to live, the field forgets the jump: it said "#N · as of position N" beside
    // "live position …" before (a new user's finding)
    await jump(`#${position}`);
    await expect.poll(() => page.getByTestId('time-jump-note').innerText()).toBe(`as of position ${position}`);
    await page.getByTestId('resume').click();
    await waitForSummary(page, (s) => s.live, 'the live view');
    await expect.poll(() => page.getByTestId('time-jump-input').inputValue()).toBe('');
    await expect.poll(() => page.getByTestId('time-jump-note').innerText()).not.toContain('as of');
  }, 120_000);
});
