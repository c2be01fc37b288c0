/**
 * The dashboard in Chromium against a real coordinator (built app, ephemeral port, SQLite log in a
 * temp dir) while the demo's agents contend for three deploy slots: live lanes, the rate charts
 * held while far below the fold and current once scrolled to, a refused stale write in the
 * rejections table, its permalink in a fresh browser, "not in the log", time travel checked against
 * the dashboard's own fold of `/v1/events`, pause/resume without loss, and a `kill -9` of the
 * coordinator with a restart on the same log.
 *
 * The tests share one stack (starting it and waiting for the demo's first refusal is most of the
 * cost) and run in order; each waits on the log or the page for what it needs, never on a timer.
 * Screenshots go to `test/e2e/artifacts/` (ignored by git). `UPDATE_SCREENSHOTS=1` also refreshes
 * `docs/dashboard.png` and `docs/dashboard-investigation.png` from this run.
 *
 * Without Chromium the suite is skipped with the reason, except with `CI=true`, where it fails
 * (`support/demo-browser-suite.ts`).
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { holderColor } from '@lease-fence/dashboard-model';
import { launchChromium } from './support/chromium.js';
import {
  dashboardUrl,
  expectPageMatchesFold,
  openDashboard,
  readCanvasInk,
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
import type { DemoStack } from './support/demo-stack.js';
import type { EventLogReader } from './support/event-log-reader.js';
import { createArtifactsDir, screenshot } from './support/screenshots.js';

/** Console errors a crashed coordinator causes in a page that is connected to it (the stream retries). */
const CONNECTION_LOST =
  /ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|ERR_EMPTY_RESPONSE|WebSocket connection to .* failed/;

describe.skipIf(SKIP_BROWSER_SUITES)('the dashboard, live against the coordinator and the demo', () => {
  const suite = useDemoBrowser(createArtifactsDir);
  let stack: DemoStack;
  let log: EventLogReader;
  let page: Page;
  beforeAll(() => {
    ({ stack, log, page } = suite);
  });

  /** The demo's first refused stale write (the same one for every test). */
  const aRejection = (): Promise<RecordedOf<'FenceRejected'>> => suite.firstRejection();

  /** Opens the live dashboard and waits until it has caught up with the log as read just before. */
  const openLive = async (target: Page): Promise<void> => {
    await openDashboard(target, dashboardUrl(stack.url, {}, stack.viewerToken));
    const head = await log.refresh();
    await waitForSummary(
      target,
      (s) => s.connection === 'live' && s.live && s.position >= head,
      `live at position ${head} or later`,
    );
  };

  it('draws one lane per deploy slot with the demo leases, in the lane mirror and on the canvas', async () => {
    // Given: the demo has been granted each of its three slots at least once.
    const resources = ['deploy-slot-a', 'deploy-slot-b', 'deploy-slot-c'];
    await log.waitUntil(
      () =>
        resources.every((resource) =>
          log.events.some((e) => isType('LeaseGranted')(e) && e.event.data.resource === resource),
        )
          ? true
          : undefined,
      {
        description: 'a LeaseGranted on each deploy slot',
      },
    );

    // When
    await openLive(page);

    // Then: the mirror lists each lane with bars, the header counts them, the canvas has bars in the holders' colours.
    for (const resource of resources) {
      await expect
        .poll(
          async () =>
            Number(
              await page.locator(`[data-testid="lane-row"][data-resource="${resource}"]`).getAttribute('data-bars'),
            ),
          { timeout: UI_TIMEOUT_MILLIS },
        )
        .toBeGreaterThan(0);
    }
    await expect
      .poll(() => page.getByTestId('lane-count').getAttribute('data-total'), { timeout: UI_TIMEOUT_MILLIS })
      .toBe('3');
    const summary = await readSummary(page);
    expect(summary).toMatchObject({ connection: 'live', live: true, lanes: 3, anomalies: 0 });
    expect(summary.generations).toBeGreaterThanOrEqual(3);
    expect(summary.shapesDrawn).toBeGreaterThan(0);
    const holders = [...new Set(log.events.filter(isType('LeaseGranted')).map((e) => e.event.data.holderId))];
    const ink = await readCanvasInk(page, holders.map(holderColor));
    expect(ink.inkPixels).toBeGreaterThan(1_000);
    expect(
      ink.pixelsOf.reduce((sum, pixels) => sum + pixels, 0),
      `pixels in the colours of ${holders.join(', ')}`,
    ).toBeGreaterThan(100);
    await screenshot(page, 'live-lanes.png');
  }, 90_000);

  it('keeps the rate charts as last drawn while they are far below the fold, and draws the current rates when scrolled to', async () => {
    // Given: the live page in a window so short that the rates panel is far below it.
    await openLive(page);
    const rates = page.getByTestId('rates');
    const size = page.viewportSize();
    await page.setViewportSize({ width: size?.width ?? 1400, height: 300 });
    try {
      await page.evaluate('window.scrollTo(0, 0)');

      // When: a rate bin passes (2 s in the default window), the charts keep their last drawing.
      await expect.poll(() => rates.getAttribute('data-held'), { timeout: UI_TIMEOUT_MILLIS }).toBe('true');

      // Then: scrolled into view, they draw the rates the page has now (nothing held).
      await rates.scrollIntoViewIfNeeded();
      await expect.poll(() => rates.getAttribute('data-held'), { timeout: UI_TIMEOUT_MILLIS }).toBeNull();
      expect(await page.getByTestId('rate-chart').locator('path.recharts-curve').count()).toBeGreaterThan(0);
    } finally {
      if (size !== null) await page.setViewportSize(size);
      await page.evaluate('window.scrollTo(0, 0)');
    }
  }, 60_000);

  it('updates the rows of the events and holders tables in place: the same <tr> elements show the new rows', async () => {
    // Given: the live page, each event row marked with its index (an attribute React does not manage).
    await openLive(page);
    const eventRows = page.getByTestId('event-row');
    await expect.poll(() => eventRows.count(), { timeout: UI_TIMEOUT_MILLIS }).toBeGreaterThan(1);
    const firstPosition = await eventRows.first().getAttribute('data-position');
    await eventRows.evaluateAll((rows) => rows.forEach((row, i) => row.setAttribute('data-test-mark', String(i))));

    // When: the log grows and the table shows later events.
    await expect
      .poll(() => eventRows.first().getAttribute('data-position'), { timeout: UI_TIMEOUT_MILLIS })
      .not.toBe(firstPosition);

    // Then: the first row is the same element, showing another event (not a row re-inserted).
    expect(await eventRows.first().getAttribute('data-test-mark')).toBe('0');

    // Given: the page paused with at least two current holders, the first holder row marked.
    await page.keyboard.press(' ');
    await waitForSummary(page, (s) => !s.live, 'paused');
    const holderRows = page.getByTestId('holder-row');
    await expect
      .poll(
        async () => {
          if ((await holderRows.count()) > 1) return true;
          await page.keyboard.press('['); // one holder here: one event back
          return false;
        },
        { timeout: UI_TIMEOUT_MILLIS },
      )
      .toBe(true);
    const second = await holderRows.nth(1).getAttribute('data-resource');
    await holderRows.first().evaluate((row) => row.setAttribute('data-test-mark', 'first'));

    // When: the filter box leaves only the second holder's row.
    await page.getByTestId('holders-filter').fill(second ?? '');
    await expect.poll(() => holderRows.count(), { timeout: UI_TIMEOUT_MILLIS }).toBe(1);

    // Then: the row that remains is the first <tr>, now showing the second holder.
    expect(await holderRows.first().getAttribute('data-resource')).toBe(second);
    expect(await holderRows.first().getAttribute('data-test-mark')).toBe('first');
    await page.getByTestId('holders-filter').fill('');
  }, 90_000);

  it('lists the stale write the deploy slot refused in the rejections table', async () => {
    // Given: the demo's first refused write is in the log.
    const rejection = await aRejection();
    const { rejected, current, resource } = rejection.event.data;

    // When
    await openLive(page);

    // Then
    const row = page.locator(`[data-testid="rejection-row"][data-position="${rejection.position}"]`);
    await expect.poll(() => row.count(), { timeout: UI_TIMEOUT_MILLIS }).toBe(1);
    const cells = await row.locator('td').allInnerTexts();
    expect(cells.slice(0, 5)).toEqual([
      String(rejection.position),
      String(rejection.event.data.seq),
      resource,
      `${rejected.holderId} · ${rejected.fence}`,
      `${current.holderId} · ${current.fence}`,
    ]);
    expect(rejected.fence).toBeLessThan(current.fence);
    await screenshot(page, 'rejections.png');
  }, 150_000);

  it("opens the rejection's permalink in a fresh browser: both fences and the sentence that explains the refusal", async () => {
    // Given: the live page with the rejection selected.
    const rejection = await aRejection();
    const { rejected, current, resource } = rejection.event.data;
    await openLive(page);
    await page.locator(`[data-testid="rejection-row"][data-position="${rejection.position}"]`).click();
    await expect
      .poll(() => page.getByTestId('investigation').getAttribute('data-state'), { timeout: UI_TIMEOUT_MILLIS })
      .toBe('ready');
    const permalink = await page.getByTestId('permalink').getAttribute('href');
    const explanation = await page.getByTestId('explanation').innerText();
    expect(permalink).toBe(`${stack.url}/?inv=${rejection.position}`);
    await screenshot(page, 'investigation.png', 'dashboard-investigation.png');

    // When: another browser (its own profile: no token, no storage) opens the link, and its user pastes a viewer token.
    const fresh = await launchChromium();
    try {
      const other = await fresh.firstPage();
      await other.goto(permalink ?? '');
      await other.getByTestId('token-input').fill(stack.viewerToken);
      await other.getByTestId('token-input').press('Enter');

      // Then: the same investigation.
      const investigation = other.getByTestId('investigation');
      await expect.poll(() => investigation.getAttribute('data-state'), { timeout: UI_TIMEOUT_MILLIS }).toBe('ready');
      const sentence = await other.getByTestId('explanation').innerText();
      expect(sentence).toBe(explanation);
      expect(sentence).toContain(`${rejected.holderId} wrote to ${resource} with fence ${rejected.fence}`);
      expect(sentence).toContain(`${current.holderId} had held fence ${current.fence}`);
      expect(sentence).toMatch(/so the stale write was refused/);
      await expect
        .poll(() => investigation.locator('h4').allInnerTexts(), { timeout: UI_TIMEOUT_MILLIS })
        .toEqual(
          expect.arrayContaining([
            `Refused: ${rejected.holderId}, fence ${rejected.fence}`,
            `Gate floor: ${current.holderId}, fence ${current.fence}`,
          ]),
        );
      expect(other.url()).toBe(permalink);
      await screenshot(other, 'permalink-fresh-browser.png');
      expect(fresh.problems).toEqual([]);
    } finally {
      await fresh.close();
    }
  }, 150_000);

  it('says that a position the log does not have is not in the log, for an investigation link and an as-of link', async () => {
    // Given: a position far beyond the head.
    const missing = (await log.refresh()) + 1_000_000;

    // When / Then: an investigation link.
    await openDashboard(page, dashboardUrl(stack.url, { inv: missing }, stack.viewerToken));
    const investigation = page.getByTestId('investigation');
    await expect
      .poll(() => investigation.getAttribute('data-state'), { timeout: UI_TIMEOUT_MILLIS })
      .toBe('not-in-log');
    expect(await investigation.getByTestId('not-in-log').innerText()).toContain(
      `Position ${missing} is not in the log`,
    );

    // When / Then: a time-travel link.
    await openDashboard(page, dashboardUrl(stack.url, { at: missing }, stack.viewerToken));
    const notice = page.getByTestId('live-controls').getByTestId('not-in-log');
    await expect.poll(() => notice.count(), { timeout: UI_TIMEOUT_MILLIS }).toBe(1);
    expect(await notice.innerText()).toContain(`Position ${missing} is not in the log`);
  }, 90_000);

  it('travels back with ?at=<position>: lanes, holders, rejections and restarts are the fold of /v1/events up to it', async () => {
    // Given: positions around the first refusal, and the log read up to them.
    const rejection = await aRejection();
    await log.waitUntil(() => (log.head > rejection.position ? true : undefined), {
      description: `an event after position ${rejection.position}`,
    });
    const positions = [Math.max(1, Math.floor(rejection.position / 2)), rejection.position - 1, rejection.position];

    for (const position of positions) {
      // When
      await openDashboard(page, dashboardUrl(stack.url, { at: position }, stack.viewerToken));
      // (Loaded beyond it: the view is a rebuilt state that no longer changes.)
      // at least the pinned position: the page loads to the head it first hears, then holds (ingestTarget in apps/dashboard/src/app/navigation.ts), so a head exactly at the pin is held there
      await waitForSummary(
        page,
        (s) => s.connection === 'live' && !s.live && s.position === position && s.loadedPosition >= position,
        `as of position ${position}`,
      );

      // Then
      await expectPageMatchesFold(page, log.upTo(position));
      expect(await page.locator(`[data-testid="rejection-row"][data-position="${rejection.position}"]`).count()).toBe(
        position >= rejection.position ? 1 : 0,
      );
    }
    await screenshot(page, 'time-travel.png');
  }, 150_000);

  it('pauses without losing anything: counts the new events, then resumes from where it stopped with no gap and no duplicate', async () => {
    // Given: the live page, caught up.
    await openLive(page);

    // When: paused while the demo appends at least 10 more events.
    await page.getByTestId('pause').click();
    const paused = await waitForSummary(page, (s) => !s.live, 'paused');
    const pausedAt = paused.position;
    const arrived = 10;
    await log.waitUntil(() => (log.head >= pausedAt + arrived ? true : undefined), {
      description: `${arrived} events after position ${pausedAt}`,
    });

    // Then: the view stays at that position and loading stops; the page counts what arrived since.
    const newSince = page.getByTestId('new-since');
    await expect
      .poll(async () => Number(await newSince.getAttribute('data-count')), {
        timeout: UI_TIMEOUT_MILLIS,
        message: `"N new since position ${pausedAt}" counts the ${arrived}+ events logged since the pause`,
      })
      .toBeGreaterThanOrEqual(arrived);
    const shown = await newSince.evaluate((element) => ({
      count: element.getAttribute('data-count'),
      text: element.textContent,
    }));
    expect(shown.text).toBe(
      `${Number(shown.count).toLocaleString('en-US')} new since position ${pausedAt.toLocaleString('en-US')}`,
    );
    const whilePaused = await readSummary(page);
    expect(whilePaused).toMatchObject({ live: false, position: pausedAt });
    expect(whilePaused.newSince).toBeGreaterThanOrEqual(arrived);
    expect(whilePaused.headPosition).toBeGreaterThanOrEqual(pausedAt + arrived);
    // It stopped loading (what the socket delivered before the hold took effect is kept).
    expect(whilePaused.loadedPosition).toBeLessThan(pausedAt + arrived);

    // When: back to live.
    await page.getByTestId('resume').click();
    const head = await log.refresh();

    // Then: it reaches the head read after resuming, and what it loaded is exactly the log.
    await waitForSummary(
      page,
      (s) => s.live && s.connection === 'live' && s.position >= head,
      `live again at position ${head} or later`,
    );
    await page.getByTestId('pause').click();
    // (Once the page has dropped an event, the hold is in effect: the view no longer changes.)
    const checked = await waitForSummary(
      page,
      (s) => !s.live && s.headPosition > s.loadedPosition,
      'paused again, holding',
    );
    await log.refresh();
    await expectPageMatchesFold(page, log.upTo(checked.position));
    expect(await page.getByTestId('problems').count()).toBe(0);
  }, 120_000);

  it('survives kill -9 of the coordinator: a restart marker, fences above every earlier one, and the same permalink', async () => {
    // Given: the investigation of the first refusal as the coordinator serves it before the crash, and the live page.
    const rejection = await aRejection();
    await openDashboard(page, dashboardUrl(stack.url, { inv: rejection.position }, stack.viewerToken));
    await expect
      .poll(() => page.getByTestId('investigation').getAttribute('data-state'), { timeout: UI_TIMEOUT_MILLIS })
      .toBe('ready');
    const explanationBefore = await page.getByTestId('explanation').innerText();
    await openLive(page);
    const headBefore = await log.refresh();

    // When: the coordinator is killed without a chance to clean up, and started again on its log.
    suite.allowProblems(CONNECTION_LOST);
    await stack.crashAndRestartCoordinator();

    // Then: the log has the new boot, and the next grant is above every fence granted before it.
    const restart = await log.waitFor(
      (e): e is RecordedOf<'CoordinatorStarted'> => isType('CoordinatorStarted')(e) && e.position > headBefore,
      { description: 'the CoordinatorStarted of the restart' },
    );
    const nextGrant = await log.waitFor(
      (e): e is RecordedOf<'LeaseGranted'> => isType('LeaseGranted')(e) && e.position > restart.position,
      { description: 'a grant after the restart' },
    );
    const grants = log.events.filter(isType('LeaseGranted'));
    const highestBefore = Math.max(
      ...grants.filter((e) => e.position < restart.position).map((e) => e.event.data.fence),
    );
    expect(restart.event.data.previousBootId).toBeDefined();
    expect(restart.event.data.recoveredFence).toBeGreaterThanOrEqual(highestBefore);
    expect(nextGrant.event.data.fence).toBeGreaterThan(highestBefore);
    const fences = grants.map((e) => e.event.data.fence);
    expect(fences, 'fences in log order').toEqual([...fences].sort((a, b) => a - b));
    expect(new Set(fences).size).toBe(fences.length);

    // Then: the page (connected before the crash) reconnects, shows the restart and the new fences.
    const marker = page.locator(`[data-testid="restart-marker"][data-position="${restart.position}"]`);
    await expect.poll(() => marker.count(), { timeout: UI_TIMEOUT_MILLIS }).toBe(1);
    await waitForSummary(
      page,
      (s) =>
        s.connection === 'live' &&
        s.live &&
        s.position >= nextGrant.position &&
        s.restarts === 1 && // the fresh log's first start is a start, not a restart
        s.fenceCounter >= nextGrant.event.data.fence,
      'live after the restart, with the new grant',
    );
    expect(await marker.innerText()).toContain(`recovered fence ${restart.event.data.recoveredFence}`);
    await screenshot(page, 'after-restart.png');

    // Then: the permalink of the refusal opens the same investigation in a fresh browser.
    const fresh = await launchChromium();
    try {
      const other = await fresh.firstPage();
      await openDashboard(other, dashboardUrl(stack.url, { inv: rejection.position }, stack.viewerToken));
      await expect
        .poll(() => other.getByTestId('investigation').getAttribute('data-state'), { timeout: UI_TIMEOUT_MILLIS })
        .toBe('ready');
      expect(await other.getByTestId('explanation').innerText()).toBe(explanationBefore);
      expect(fresh.problems).toEqual([]);
    } finally {
      await fresh.close();
    }

    // The picture for the README and docs/dashboard.md: the last 45 s of lanes, with the refusals and the restart,
    // once the page has followed the log live for a few more events (rates filled in).
    await openDashboard(page, dashboardUrl(stack.url, { span: 45_000 }, stack.viewerToken));
    const headNow = await log.refresh();
    await waitForSummary(
      page,
      (s) => s.connection === 'live' && s.live && s.position >= headNow + 5 && s.shownLanes === 3,
      `live past position ${headNow + 5}`,
    );
    await screenshot(page, 'readme-lanes.png', 'dashboard.png');
  }, 180_000);
});
