/**
 * The dashboard's history features in Chromium against a real coordinator and the demo's agents:
 * time travel by wall time (`?at=<ISO time>`) checked against the dashboard's own fold of
 * `/v1/events`, an unreadable `?at=`, stepping with `[` `]` `n` `p`, exporting a rejection's
 * investigation (JSON and Markdown downloads) and importing the JSON in a browser that has no
 * coordinator at all, and replay: forward in order to the head (then live), and stopped where it is.
 *
 * Like `dashboard.int.spec.ts`, the tests share one stack and run in order; each waits on the log
 * or the page, never on a timer. Without Chromium the suite is skipped, except with `CI=true`.
 */
import type { RecordedEvent } from '@lease-fence/protocol';
import type { Download, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_CONTEXT_RADIUS,
  formatWallDateTime,
  INVESTIGATION_FORMAT,
  isRestart,
  type InvestigationExport,
} from '@lease-fence/dashboard-model';
import { recordAsOf } from './support/as-of-recorder.js';
import { launchChromium } from './support/chromium.js';
import {
  dashboardUrl,
  expectPageMatchesFold,
  openDashboard,
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
import { OFFLINE_ORIGIN, serveDashboardOffline } from './support/offline-dashboard.js';

/**
 * The position the dashboard must show for `?at=<wallMillis>`: the last event recorded at or
 * before that instant, i.e. the one before the first event recorded after it (0 = none yet).
 */
const positionAtWall = (events: readonly RecordedEvent[], wallMillis: number): number => {
  const after = events.findIndex((e) => e.event.data.wallMillis > wallMillis);
  return after === -1 ? (events.at(-1)?.position ?? 0) : after;
};

/** `wallMillis` written as an ISO time with a `+02:00` offset (the same instant as its `Z` form). */
const isoWithOffset = (wallMillis: number): string =>
  new Date(wallMillis + 2 * 3_600_000).toISOString().replace('Z', '+02:00');

/** What an investigation panel shows, to compare two of them. */
interface ShownInvestigation {
  readonly explanation: string;
  /** The generations, the floor and the restarts, as text. */
  readonly details: string;
  /** The events around the rejection: position and row text. */
  readonly rows: readonly (readonly [string | null, string])[];
}

const readInvestigation = async (page: Page): Promise<ShownInvestigation> => {
  const panel = page.getByTestId('investigation');
  await expect.poll(() => panel.getAttribute('data-state'), { timeout: UI_TIMEOUT_MILLIS }).toBe('ready');
  const rows = panel.getByTestId('event-row');
  return {
    explanation: await panel.getByTestId('explanation').innerText(),
    details: await panel.locator('.investigation-grid').innerText(),
    rows: await rows.evaluateAll((elements) =>
      elements.map((element): [string | null, string] => {
        const row = element as unknown as { getAttribute(name: string): string | null; readonly innerText: string };
        return [row.getAttribute('data-position'), row.innerText];
      }),
    ),
  };
};

/** The text of a downloaded file. */
const readDownload = async (download: Download): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

describe.skipIf(SKIP_BROWSER_SUITES)(
  "the dashboard's history: wall-time links, exported investigations, replay",
  () => {
    const suite = useDemoBrowser();
    let stack: DemoStack;
    let log: EventLogReader;
    let page: Page;
    beforeAll(() => {
      ({ stack, log, page } = suite);
    });

    /** The demo's first refused stale write, once the log holds an investigation's context after it. */
    const aRejection = (): Promise<RecordedOf<'FenceRejected'>> => suite.firstRejection(DEFAULT_CONTEXT_RADIUS);

    /** Opens `?at=<at>` and waits for the view as of `expected`, loaded beyond it (a state that no longer changes). */
    const openAsOf = async (at: string | number, expected: number): Promise<void> => {
      await openDashboard(page, dashboardUrl(stack.url, { at }, stack.viewerToken));
      // at least the pinned position: the page loads to the head it first hears, then holds (ingestTarget in apps/dashboard/src/app/navigation.ts), so a head exactly at the pin is held there
      await waitForSummary(
        page,
        (s) => s.connection === 'live' && !s.live && s.position === expected && s.loadedPosition >= expected,
        `as of position ${expected} for at=${at}`,
      );
    };

    it('travels back with ?at=<ISO time>: the view is the fold of /v1/events up to the last event recorded at or before that instant', async () => {
      // Given: three instants: the first refusal's own time; 1 ms before an event recorded at least
      // 2 ms after the one before it (written with a +02:00 offset); a minute before the log began.
      const rejection = await aRejection();
      const events = log.upTo(log.head);
      const wallOf = (position: number): number => events[position - 1]?.event.data.wallMillis ?? Number.NaN;
      const gap = events.findLast(
        (e) => e.position < rejection.position - 1 && wallOf(e.position + 1) - e.event.data.wallMillis >= 2,
      );
      expect(gap, 'two events before the refusal recorded at least 2 ms apart').toBeDefined();
      const beforeNext = wallOf((gap?.position ?? 0) + 1) - 1;
      const beforeLog = wallOf(1) - 60_000;
      const probes = [
        {
          at: new Date(rejection.event.data.wallMillis).toISOString(),
          wallMillis: rejection.event.data.wallMillis,
          expected: positionAtWall(events, rejection.event.data.wallMillis),
        },
        { at: isoWithOffset(beforeNext), wallMillis: beforeNext, expected: gap?.position ?? 0 },
        { at: new Date(beforeLog).toISOString(), wallMillis: beforeLog, expected: 0 },
      ];
      expect(probes[0]?.expected).toBeGreaterThanOrEqual(rejection.position);
      expect(probes.map((probe) => positionAtWall(events, probe.wallMillis))).toEqual(
        probes.map((probe) => probe.expected),
      );

      for (const { at, wallMillis, expected } of probes) {
        // When
        await openAsOf(at, expected);

        // Then: the fold of the log up to that event; the link keeps the time; the toolbar names both.
        await expectPageMatchesFold(page, log.upTo(expected));
        expect(new URL(page.url()).searchParams.get('at')).toBe(at);
        expect(await page.getByTestId('as-of').innerText()).toBe(
          `as of position ${expected.toLocaleString('en-US')} · ${formatWallDateTime(wallMillis)}`,
        );
        expect(await page.locator(`[data-testid="rejection-row"][data-position="${rejection.position}"]`).count()).toBe(
          expected >= rejection.position ? 1 : 0,
        );
      }
    }, 120_000);

    it('says that an ?at= which is neither a log position nor a time is unreadable, and shows the live log instead of a blank page', async () => {
      // Given: a log with lanes.
      const head = await log.refresh();

      // When
      await openDashboard(page, dashboardUrl(stack.url, { at: 'yesterday' }, stack.viewerToken));

      // Then: a message naming the value, and the live view.
      const notice = page.getByTestId('unreadable-at');
      await expect.poll(() => notice.count(), { timeout: UI_TIMEOUT_MILLIS }).toBe(1);
      expect(await notice.innerText()).toContain('"yesterday"');
      await waitForSummary(
        page,
        (s) => s.connection === 'live' && s.live && s.position >= head && s.lanes > 0,
        `live at position ${head} or later, with lanes`,
      );
    }, 60_000);

    it('steps one event with ] and [ and jumps to the next or previous rejection or restart with n and p; each view is the fold up to it', async () => {
      // Given: the view as of the event before the first refusal.
      const rejection = await aRejection();
      const before = rejection.position - 1;
      await openAsOf(before, before);
      // Markers are refusals and restarts; the fresh log's first start is a start, not a restart.
      const markers = log
        .upTo(log.head)
        .filter(
          (e) => e.event.type === 'FenceRejected' || (e.event.type === 'CoordinatorStarted' && isRestart(e.event.data)),
        )
        .map((e) => e.position);
      const previousMarker = markers.findLast((position) => position < rejection.position);
      const nextMarker = markers.find((position) => position > rejection.position);

      const press = async (key: string, expected: number): Promise<void> => {
        await page.keyboard.press(key);
        await waitForSummary(
          page,
          (s) => !s.live && s.position === expected,
          `as of position ${expected} after "${key}"`,
        );
        await expect
          .poll(() => new URL(page.url()).searchParams.get('at'), { timeout: UI_TIMEOUT_MILLIS })
          .toBe(String(expected));
        await expectPageMatchesFold(page, log.upTo(expected));
      };

      // When / Then
      await press(']', rejection.position);
      await press('[', before);
      await press('n', rejection.position);
      await press('p', previousMarker ?? rejection.position); // nothing before the first refusal: p stays
      if (previousMarker !== undefined) await press('n', rejection.position);
      if (nextMarker !== undefined) await press('n', nextMarker);
    }, 90_000);

    it('jumps with n to a rejection or restart the paused page has not loaded yet: it loads on to it', async () => {
      // Given: the live page paused; its loading holds where it paused
      await aRejection();
      await openDashboard(page, dashboardUrl(stack.url, {}, stack.viewerToken));
      await waitForSummary(page, (s) => s.connection === 'live' && s.live, 'the live view');
      await page.getByTestId('pause').click();
      const paused = await waitForSummary(page, (s) => !s.live, 'the view paused');
      // And the log has grown a marker past everything the page loaded
      const isMarker = (e: RecordedEvent): boolean =>
        e.event.type === 'FenceRejected' || (e.event.type === 'CoordinatorStarted' && isRestart(e.event.data));
      const next = await log.waitFor((e) => e.position > paused.loadedPosition && isMarker(e), {
        description: `a rejection or restart after position ${paused.loadedPosition}`,
        timeoutMillis: 90_000,
      });
      const firstAfter = log.upTo(next.position).find((e) => e.position > paused.position && isMarker(e))!;
      expect((await readSummary(page)).loadedPosition).toBeLessThan(firstAfter.position);

      // When
      await page.getByTestId('live-controls').getByTitle('Next rejection or restart (n)').click();

      // Then: the view is as of that marker, the fold up to it (before the fix, the page stayed where it was)
      await waitForSummary(
        page,
        (s) => !s.live && s.position === firstAfter.position,
        `as of position ${firstAfter.position} after "n"`,
      );
      await expectPageMatchesFold(page, log.upTo(firstAfter.position));
    }, 150_000);

    /**
     * The investigation of the newest refusal in the live page's table (the table is virtualised,
     * newest first), as the page shows it once the events after it are loaded, and its two downloads.
     */
    let exported:
      | Promise<{
          readonly rejection: RecordedOf<'FenceRejected'>;
          readonly shown: ShownInvestigation;
          readonly json: string;
          readonly markdown: string;
        }>
      | undefined;
    const exportFromLivePage = (): NonNullable<typeof exported> =>
      (exported ??= (async () => {
        await aRejection();
        await openDashboard(page, dashboardUrl(stack.url, {}, stack.viewerToken));
        const newest = page.getByTestId('rejection-row').first();
        await newest.waitFor({ timeout: UI_TIMEOUT_MILLIS });
        const position = Number(await newest.getAttribute('data-position'));
        await page.locator(`[data-testid="rejection-row"][data-position="${position}"]`).click();
        const rejection = await log.waitFor(
          (e): e is RecordedOf<'FenceRejected'> => isType('FenceRejected')(e) && e.position === position,
          { description: `the FenceRejected at position ${position}` },
        );
        // (Once the events after it are loaded, the investigation no longer changes.)
        await log.waitUntil(() => (log.head >= position + DEFAULT_CONTEXT_RADIUS ? true : undefined), {
          description: `${DEFAULT_CONTEXT_RADIUS} events after position ${position}`,
        });
        await waitForSummary(
          page,
          (s) => s.loadedPosition >= position + DEFAULT_CONTEXT_RADIUS,
          `loaded up to position ${position + DEFAULT_CONTEXT_RADIUS}`,
        );
        await expect
          .poll(() => page.getByTestId('investigation').getByTestId('event-row').count(), {
            timeout: UI_TIMEOUT_MILLIS,
          })
          .toBe(Math.min(position - 1, DEFAULT_CONTEXT_RADIUS) + DEFAULT_CONTEXT_RADIUS + 1);
        const shown = await readInvestigation(page);
        const download = async (testId: string, filename: string): Promise<string> => {
          const [file] = await Promise.all([
            page.waitForEvent('download', { timeout: UI_TIMEOUT_MILLIS }),
            page.getByTestId(testId).click(),
          ]);
          expect(file.suggestedFilename()).toBe(filename);
          return readDownload(file);
        };
        const json = await download('export-json', `investigation-${position}.json`);
        const markdown = await download('export-markdown', `investigation-${position}.md`);
        return { rejection, shown, json, markdown };
      })());

    it("exports a rejection's investigation: the JSON holds the log's own events around it, the Markdown its holders, fences, positions and explanation", async () => {
      // When: the newest rejection is opened from the table of the live page and exported both ways.
      const { rejection, shown, json, markdown } = await exportFromLivePage();
      const { resource, rejected, current, gateId, seq } = rejection.event.data;

      // Then: the JSON is the investigation's slice of the log, exactly as /v1/events serves it.
      const doc = JSON.parse(json) as InvestigationExport;
      expect(doc).toMatchObject({
        format: INVESTIGATION_FORMAT,
        version: 1,
        position: rejection.position,
        contextRadius: DEFAULT_CONTEXT_RADIUS,
        explanation: shown.explanation,
      });
      await log.refresh();
      expect(doc.events).toEqual(doc.events.map((e) => log.upTo(e.position)[e.position - 1]));
      const positions = doc.events.map((e) => e.position);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      for (
        let position = Math.max(1, rejection.position - DEFAULT_CONTEXT_RADIUS);
        position <= rejection.position + DEFAULT_CONTEXT_RADIUS;
        position += 1
      )
        expect(positions).toContain(position);
      const grantOf = (fence: number): number | undefined =>
        log.events.find(
          (e) => isType('LeaseGranted')(e) && e.event.data.resource === resource && e.event.data.fence === fence,
        )?.position;
      for (const fence of [rejected.fence, current.fence]) {
        const granted = grantOf(fence);
        if (granted !== undefined) expect(positions, `the LeaseGranted of fence ${fence}`).toContain(granted);
      }

      // Then: the Markdown says what happened, to whom, with which fences, where in the log, and links back.
      const lines = markdown.split('\n');
      expect(lines[0]).toBe(
        `## Stale write refused on \`${resource}\` at ${formatWallDateTime(rejection.event.data.wallMillis)} (log position ${rejection.position})`,
      );
      expect(lines).toContain(shown.explanation);
      expect(lines.some((line) => line.startsWith(`| refused | ${rejected.holderId} | ${rejected.fence} |`))).toBe(
        true,
      );
      expect(lines.some((line) => line.startsWith(`| floor | ${current.holderId} | ${current.fence} |`))).toBe(true);
      expect(lines.some((line) => line.startsWith(`- Rejection: gate \`${gateId}\` seq ${seq} `))).toBe(true);
      expect(
        lines.some((line) =>
          line.startsWith(
            `| ${rejection.position} **←** | FenceRejected | ${resource} | ${rejected.holderId} | ${rejected.fence} |`,
          ),
        ),
      ).toBe(true);
      expect(lines).toContain(`Open in the dashboard: ${stack.url}/?inv=${rejection.position}`);
    }, 120_000);

    it('imports the exported JSON in a browser with no coordinator at all and shows the same investigation, which exports the same file again', async () => {
      // Given: the exported files, and a fresh browser that can reach nothing but the dashboard's built files.
      const { rejection, shown, json, markdown } = await exportFromLivePage();
      const offline = await launchChromium();
      try {
        const reached = await serveDashboardOffline(offline.context);
        const other = await offline.firstPage();
        await other.goto(`${OFFLINE_ORIGIN}/`);
        const importFile = other.getByTestId('import-file');

        // When: the Markdown is picked by mistake. Then: the page says why it cannot read it.
        await importFile.setInputFiles({
          name: `investigation-${rejection.position}.md`,
          mimeType: 'text/markdown',
          buffer: Buffer.from(markdown),
        });
        const alert = other.getByRole('alert');
        await expect.poll(() => alert.count(), { timeout: UI_TIMEOUT_MILLIS }).toBe(1);
        expect(await alert.innerText()).toMatch(new RegExp(`^investigation-${rejection.position}\\.md: not JSON`));

        // When: the JSON is imported.
        await importFile.setInputFiles({
          name: `investigation-${rejection.position}.json`,
          mimeType: 'application/json',
          buffer: Buffer.from(json),
        });

        // Then: the same sentence, generations, floor and events, marked as imported.
        expect(await readInvestigation(other)).toEqual(shown);
        expect(await other.getByTestId('imported').innerText()).toContain(
          `imported from investigation-${rejection.position}.json`,
        );
        const [again] = await Promise.all([
          other.waitForEvent('download', { timeout: UI_TIMEOUT_MILLIS }),
          other.getByTestId('export-json').click(),
        ]);
        expect(JSON.parse(await readDownload(again))).toEqual(JSON.parse(json));

        // When: the Markdown is picked again over the imported investigation. Then: it says so, and the investigation stays.
        await importFile.setInputFiles({
          name: `again-${rejection.position}.md`,
          mimeType: 'text/markdown',
          buffer: Buffer.from(markdown),
        });
        await expect
          .poll(() => other.getByRole('alert').innerText(), { timeout: UI_TIMEOUT_MILLIS })
          .toMatch(new RegExp(`^again-${rejection.position}\\.md: not JSON`));
        expect(await readInvestigation(other)).toEqual(shown);

        // Then: nothing was asked of a coordinator.
        expect(reached).toEqual({ refused: [], webSockets: [] });
        expect(offline.problems).toEqual([]);
      } finally {
        await offline.close();
      }
    }, 120_000);

    it('replays a span of history forward: the as-of position only moves forward, through the events in between, and the view goes live at the head', async () => {
      // Given: the view as of the last event about 12 s before the head, and a replay speed of 5×
      // (the replay catches up with a log that keeps growing at 1× in about 3 s).
      const speed = 5;
      await log.waitUntil(
        () =>
          (log.events.at(-1)?.event.data.wallMillis ?? 0) - (log.events[0]?.event.data.wallMillis ?? 0) >= 12_000
            ? true
            : undefined,
        { description: '12 s of log' },
      );
      const events = log.upTo(log.head);
      const start = Math.max(1, positionAtWall(events, (events.at(-1)?.event.data.wallMillis ?? 0) - 12_000));
      expect(log.head - start, 'events in the span').toBeGreaterThanOrEqual(10);
      await openAsOf(start, start);
      await page.getByTestId('live-controls').locator('select').selectOption(String(speed));
      const recording = await recordAsOf(page);

      // When
      await page.getByTestId('replay').click();
      await expect.poll(() => new URL(page.url()).searchParams.get('play'), { timeout: UI_TIMEOUT_MILLIS }).toBe('1');
      expect(new URL(page.url()).searchParams.get('speed')).toBe(String(speed));

      // Then: it ends live, at the head, with the replay over and its speed dropped from the URL
      // (a live view has no replay speed; issue 17's `?speed=10` defect).
      const end = await waitForSummary(page, (s) => s.live, 'live after the replay', { timeoutMillis: 60_000 });
      await expect.poll(() => [...new URL(page.url()).searchParams.keys()], { timeout: UI_TIMEOUT_MILLIS }).toEqual([]);
      await recording.stop();
      const samples = await recording.samples();

      // Then: on the way, positions in log order, several of them between the start and the end.
      const replayed = samples.filter((s) => !s.live).map((s) => s.position);
      expect(replayed, 'as-of positions while replaying').toEqual([...replayed].sort((a, b) => a - b));
      expect(Math.min(...replayed)).toBeGreaterThan(start);
      expect(Math.max(...replayed)).toBeLessThanOrEqual(end.position);
      expect(
        new Set(replayed).size,
        `distinct positions between ${start} and ${end.position}: ${replayed.join(', ')}`,
      ).toBeGreaterThanOrEqual(3);
      // Once live, it stays live (the log keeps growing, so more live renders may follow the first).
      const wentLive = samples.findIndex((s) => s.live);
      expect(wentLive).toBeGreaterThan(0);
      expect(samples.slice(wentLive).map((s) => s.live)).toEqual(samples.slice(wentLive).map(() => true));
      expect(await page.getByTestId('pause').count()).toBe(1);
    }, 120_000);

    it('stops a replay where it is: the position holds while the log grows, and the view is the fold up to it', async () => {
      // Given: a replay at 1× from the first refusal.
      const rejection = await aRejection();
      await openAsOf(rejection.position, rejection.position);
      await page.getByTestId('replay').click();
      await waitForSummary(
        page,
        (s) => !s.live && s.position > rejection.position,
        `replaying past position ${rejection.position}`,
      );

      // When: stopped.
      await page.getByTestId('replay').click();
      await expect.poll(() => new URL(page.url()).searchParams.get('play'), { timeout: UI_TIMEOUT_MILLIS }).toBeNull();
      const stopped = await readSummary(page);
      const recording = await recordAsOf(page);
      expect(await page.getByTestId('replay').innerText()).toBe('▶ Replay');
      expect(new URL(page.url()).searchParams.get('at')).toBe(String(stopped.position));

      // Then: while the demo logs 10 more events (time a running replay would have moved on), the view stays.
      const head = await log.refresh();
      await log.waitUntil(() => (log.head >= head + 10 ? true : undefined), {
        description: `10 events after position ${head}`,
      });
      expect(await recording.samples()).toEqual([]);
      await recording.stop();
      expect(await readSummary(page)).toMatchObject({ live: false, position: stopped.position });
      await expectPageMatchesFold(page, log.upTo(stopped.position));
    }, 90_000);
  },
);
