/**
 * The dashboard defects of issue 17 that only show in the page, each checked in Chromium against
 * the demo stack (the built coordinator and the demo's agents), plus 40 extra lanes acquired over
 * HTTP so the lanes scroll: a fresh log's start is not a restart; the lanes never draw inside the
 * time axis when scrolled; the tooltip follows the lane under a still pointer when the lanes
 * scroll; the shortcuts work after using the scrubber; going back to live drops `speed`; the
 * import picker is a button; the hold histogram has a title; a permalink opened in a new tab asks
 * for the token and then opens the link's view.
 *
 * The tests share one stack and run in order; each waits on the page for what it needs.
 */
import type { Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { holderColor } from '@lease-fence/dashboard-model';
import { launchChromium } from './support/chromium.js';
import { dashboardUrl, openDashboard, readSummary, waitForSummary } from './support/dashboard-page.js';
import { SKIP_BROWSER_SUITES, UI_TIMEOUT_MILLIS, useDemoBrowser } from './support/demo-browser-suite.js';
import type { DemoStack } from './support/demo-stack.js';

/** An agent token of the demo stack (support/demo-stack.ts), holder `agent-1`. */
const AGENT_TOKEN = 'e2e-agent-1-5e8f30c1';
/** Extra lanes, sorted before the deploy slots (lanes are sorted by resource id). */
const EXTRA_LANES = Array.from({ length: 40 }, (_, i) => `a-lane-${String(i).padStart(3, '0')}`);
/** The timeline's geometry (apps/dashboard/src/timeline/timeline-view.tsx). */
const AXIS_HEIGHT_PX = 26;
const ROW_HEIGHT_PX = 22;
const LABEL_WIDTH_PX = 190;

describe.skipIf(SKIP_BROWSER_SUITES)('dashboard defects, in Chromium against the demo stack', () => {
  const suite = useDemoBrowser();
  let stack: DemoStack;
  let page: Page;
  beforeAll(async () => {
    ({ stack, page } = suite);
    for (const [i, resource] of EXTRA_LANES.entries()) {
      const reply = await fetch(`${stack.url}/v1/leases/${resource}/acquire`, {
        method: 'POST',
        headers: { authorization: `Bearer ${AGENT_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ requestId: `defects-${i}`, ttlMillis: 600_000 }),
      });
      if (reply.status !== 200) throw new Error(`acquire ${resource}: HTTP ${reply.status} ${await reply.text()}`);
    }
    await openDashboard(page, dashboardUrl(stack.url, {}, stack.viewerToken));
    await waitForSummary(
      page,
      (s) => s.connection === 'live' && s.lanes >= EXTRA_LANES.length,
      `live with the ${EXTRA_LANES.length} extra lanes`,
    );
  }, 120_000);

  /** Waits until the page has painted two more animation frames. */
  const nextFrames = (target: Page): Promise<void> =>
    target.evaluate(
      () =>
        new Promise<void>((resolve) => {
          const raf = (globalThis as unknown as { requestAnimationFrame(cb: () => void): number })
            .requestAnimationFrame;
          raf(() => raf(() => resolve()));
        }),
    );

  const asOfPosition = async (target: Page): Promise<number> =>
    Number(await target.getByTestId('as-of').getAttribute('data-position'));

  it("counts and draws a fresh log's first start as a start, not a restart", async () => {
    const summary = await readSummary(page);
    expect(summary.restarts).toBe(0);
    await expect.poll(() => page.locator('[data-testid="restart-marker"]').count()).toBe(0);
  });

  it('never draws a lane inside the time axis band when the lanes are scrolled by half a row', async () => {
    // Given: the top lane (a-lane-000, held for 10 minutes) half scrolled under the axis
    await page.locator('.timeline-scroll').evaluate((el, top) => {
      (el as unknown as { scrollTop: number }).scrollTop = top;
    }, ROW_HEIGHT_PX / 2);
    await nextFrames(page);

    // When: the canvas's pixels in the axis band and in the row just below it are read
    const colours = ['agent-1', 'agent-2', 'agent-3', 'agent-4'].map(holderColor);
    const inBand = (fromY: number, toY: number) =>
      page.getByTestId('lanes-canvas').evaluate(
        (element, args) => {
          const canvas = element as unknown as {
            width: number;
            getContext(kind: '2d'): {
              getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> };
            };
          };
          const dpr = (globalThis as unknown as { devicePixelRatio: number }).devicePixelRatio || 1;
          const doc = (globalThis as unknown as { document: { createElement(tag: 'canvas'): typeof canvas } }).document;
          const scratch = doc.createElement('canvas').getContext('2d') as unknown as {
            fillStyle: string;
            fillRect(x: number, y: number, w: number, h: number): void;
            getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> };
          };
          const wanted = new Set(
            args.colours.map((c) => {
              scratch.fillStyle = c;
              scratch.fillRect(0, 0, 1, 1);
              return Array.from(scratch.getImageData(0, 0, 1, 1).data).join(',');
            }),
          );
          const x0 = Math.ceil(args.labelWidth * dpr);
          const y0 = Math.floor(args.fromY * dpr);
          const h = Math.max(1, Math.floor((args.toY - args.fromY) * dpr));
          const { data } = canvas.getContext('2d').getImageData(x0, y0, canvas.width - x0, h);
          let count = 0;
          for (let i = 0; i < data.length; i += 4)
            if (wanted.has(`${data[i]},${data[i + 1]},${data[i + 2]},${data[i + 3]}`)) count += 1;
          return count;
        },
        { colours, labelWidth: LABEL_WIDTH_PX, fromY, toY },
      );

    // Then: the lanes are drawn below the axis, and nothing of them inside it
    expect(await inBand(AXIS_HEIGHT_PX, AXIS_HEIGHT_PX + ROW_HEIGHT_PX)).toBeGreaterThan(0);
    expect(await inBand(0, AXIS_HEIGHT_PX)).toBe(0);
    await page.locator('.timeline-scroll').evaluate((el) => {
      (el as unknown as { scrollTop: number }).scrollTop = 0;
    });
  });

  /**
   * Rests the pointer on the sixth lane and waits for its tooltip.
   * @returns the canvas box, the pointer's page coordinates and the tooltip.
   */
  const hoverSixthLane = async () => {
    const box = await page.getByTestId('lanes-canvas').boundingBox();
    if (box === null) throw new Error('the lanes canvas is not laid out');
    const x = box.x + LABEL_WIDTH_PX + 200;
    const y = box.y + AXIS_HEIGHT_PX + 5 * ROW_HEIGHT_PX + ROW_HEIGHT_PX / 2;
    await page.mouse.move(x, y);
    const tooltip = page.getByTestId('lane-tooltip');
    await expect.poll(() => tooltip.getAttribute('data-resource'), { timeout: UI_TIMEOUT_MILLIS }).toBe(EXTRA_LANES[5]);
    return { box, x, y, tooltip };
  };

  /**
   * Checks that `shown`, the tooltip's lane after a scroll under the still pointer at (`x`, `y`), is
   * the lane a fresh hover there names, and not the sixth lane the tooltip was opened on.
   */
  const expectTooltipNamesLaneUnderPointer = async (x: number, y: number, tooltip: Locator, shown: string | null) => {
    await page.mouse.move(x + 1, y);
    await nextFrames(page);
    const underPointer = await tooltip.getAttribute('data-resource');
    expect(underPointer).not.toBe(EXTRA_LANES[5]);
    expect(shown).toBe(underPointer);
  };

  it('names the lane under the pointer in the tooltip after the lanes are wheel-scrolled', async () => {
    // Given: the pointer rests on the sixth lane and its tooltip is open
    const { box, x, y, tooltip } = await hoverSixthLane();

    // When: the wheel scrolls the lanes by ten rows under the still pointer
    await page.mouse.wheel(0, 10 * ROW_HEIGHT_PX);
    await expect
      .poll(() => page.locator('.timeline-scroll').evaluate((el) => (el as unknown as { scrollTop: number }).scrollTop))
      .toBeGreaterThan(0);
    await nextFrames(page);
    const afterScroll = await tooltip.getAttribute('data-resource');

    // Then: it names the lane now under the pointer (as a fresh hover there does)
    await expectTooltipNamesLaneUnderPointer(x, y, tooltip, afterScroll);
    await page.mouse.move(box.x + 5, box.y - 40); // leave the canvas: the tooltip closes
  });

  it('names the lane under the pointer in the tooltip after the page itself scrolls under it', async () => {
    // Given: the lanes back at the top, the pointer resting on the sixth lane, its tooltip open
    await page.locator('.timeline-scroll').evaluate((el) => {
      (el as unknown as { scrollTop: number }).scrollTop = 0;
    });
    const { box, x, y, tooltip } = await hoverSixthLane();

    // When: the page (not the lanes) scrolls three rows under the still pointer, as the arrow keys do
    await page.evaluate(
      (by) => (globalThis as unknown as { scrollBy(x: number, y: number): void }).scrollBy(0, by),
      3 * ROW_HEIGHT_PX,
    );
    await nextFrames(page);
    const afterScroll = await tooltip.getAttribute('data-resource');

    // Then: it names the lane now under the pointer (as a fresh hover there does), not the one it was opened on
    await expectTooltipNamesLaneUnderPointer(x, y, tooltip, afterScroll);
    await page.mouse.move(box.x + 5, 5); // leave the canvas: the tooltip closes
    await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
  });

  it('keeps the keyboard shortcuts working after the scrubber was used; its arrow keys still move it', async () => {
    // Given: paused, then the scrubber clicked (it keeps focus)
    await page.getByTestId('pause').click();
    await expect.poll(() => page.getByTestId('live-controls').getAttribute('data-live')).toBe('false');
    await page.getByTestId('scrubber').click();
    await expect
      .poll(() =>
        page.evaluate(
          () =>
            (globalThis as unknown as { document: { activeElement: { dataset?: Record<string, string> } | null } })
              .document.activeElement?.dataset?.['testid'],
        ),
      )
      .toBe('scrubber');
    const clicked = await asOfPosition(page);

    // When / Then: the slider's own arrow key moves it one position
    await page.keyboard.press('ArrowLeft');
    await expect.poll(() => asOfPosition(page)).toBe(clicked - 1);

    // When / Then: `[` steps back one event, `]` forward, while the slider still has focus
    await page.keyboard.press('[');
    await expect.poll(() => asOfPosition(page)).toBeLessThan(clicked - 1);
    const stepped = await asOfPosition(page);
    await page.keyboard.press(']');
    await expect.poll(() => asOfPosition(page)).toBeGreaterThan(stepped);

    // When / Then: space goes back to live
    await page.keyboard.press(' ');
    await expect.poll(() => page.getByTestId('live-controls').getAttribute('data-live')).toBe('true');
  });

  it('drops ?speed= from the URL on the way back to live', async () => {
    // Given: paused, replay speed 10×
    await page.getByTestId('pause').click();
    await page.locator('[data-testid="live-controls"] select').selectOption('10');
    await expect.poll(() => new URL(page.url()).searchParams.get('speed')).toBe('10');

    // When
    await page.getByTestId('resume').click();

    // Then
    await expect.poll(() => page.getByTestId('live-controls').getAttribute('data-live')).toBe('true');
    expect(new URL(page.url()).searchParams.has('speed')).toBe(false);
    expect(new URL(page.url()).searchParams.has('at')).toBe(false);
  });

  it('shows the import picker as a button "Open log file…", with the chosen file name after it', async () => {
    // Then: a button, and the raw file input hidden
    await expect.poll(() => page.getByText('Open log file…').isVisible()).toBe(true);
    const input = await page.getByTestId('import-file').boundingBox();
    expect(input === null || (input.width <= 1 && input.height <= 1)).toBe(true);

    // When: a file is chosen (not an investigation: the page says so, and names the file)
    await page
      .getByTestId('import-file')
      .setInputFiles({ name: 'not-an-export.json', mimeType: 'application/json', buffer: Buffer.from('{}') });

    // Then
    await expect.poll(() => page.getByTestId('import-file-name').textContent()).toBe('not-an-export.json');
  });

  it('titles the hold-duration histogram', async () => {
    await expect
      .poll(() => page.getByTestId('hold-title').textContent(), { timeout: UI_TIMEOUT_MILLIS })
      .toContain('Hold durations');
  });

  it("opens a permalink in a new tab after the token prompt, keeping the link's view, and says so", async () => {
    // Given: a position of the log, and a browser with no token saved
    const position = (await readSummary(page)).position - 3;
    const other = await launchChromium();
    try {
      const tab = await other.firstPage();
      await tab.goto(dashboardUrl(stack.url, { at: position }));

      // Then: the prompt says the link's view opens after it
      await expect
        .poll(() => tab.getByTestId('token-keeps-link').textContent(), { timeout: UI_TIMEOUT_MILLIS })
        .toContain(`the log as of log position ${position}`);

      // When: the viewer token is entered
      await tab.getByTestId('token-input').fill(stack.viewerToken);
      await tab.getByTestId('token-input').press('Enter');

      // Then: the link's view opens, and the address still is the link
      await expect.poll(() => asOfPosition(tab), { timeout: UI_TIMEOUT_MILLIS }).toBe(position);
      expect(await tab.getByTestId('live-controls').getAttribute('data-live')).toBe('false');
      expect(new URL(tab.url()).searchParams.get('at')).toBe(String(position));
      expect(other.problems).toEqual([]);
    } finally {
      await other.close();
    }
  });
});
