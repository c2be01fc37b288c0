/**
 * Reading the dashboard in a browser page: its URL, its debug hook (`window.__leaseFence`), the
 * pixels of its lanes canvas, and a comparison of what it shows as of a log position with the
 * dashboard's own pure fold (`@lease-fence/dashboard-model`) run here over the events the
 * coordinator serves on `/v1/events`.
 */
import type { RecordedEvent } from '@lease-fence/protocol';
import type { Locator, Page } from 'playwright-core';
import { expect, vi } from 'vitest';
import {
  foldEvents,
  whoHeld,
  type DashboardSummary,
  type DebugHook,
  type ViewState,
} from '@lease-fence/dashboard-model';

/** The page's global object as the debug hook leaves it (the test project has no DOM types). */
interface DashboardGlobal {
  readonly __leaseFence?: DebugHook;
}

/**
 * The dashboard's address with view parameters (`at`, `inv`, …) and, optionally, the viewer token
 * (the page stores it for the tab and removes it from the address bar).
 */
export function dashboardUrl(
  baseUrl: string,
  params: Readonly<Record<string, string | number>> = {},
  token?: string,
): string {
  const query = new URLSearchParams(
    Object.entries(params).map(([name, value]): [string, string] => [name, String(value)]),
  );
  if (token !== undefined) query.set('token', token);
  const search = query.toString();
  return `${baseUrl}/${search === '' ? '' : `?${search}`}`;
}

/** Options of the waits below. */
export interface PageWaitOptions {
  /** Give up after this long, milliseconds. @defaultValue 30 000 */
  readonly timeoutMillis?: number;
}

/**
 * Opens `url` in `page` and waits until the dashboard installed its debug hook (first render done).
 *
 * @throws playwright's timeout error when the hook does not appear.
 */
export async function openDashboard(page: Page, url: string, options: PageWaitOptions = {}): Promise<void> {
  await page.goto(url);
  await page.waitForFunction(() => (globalThis as unknown as DashboardGlobal).__leaseFence !== undefined, undefined, {
    timeout: options.timeoutMillis ?? 30_000,
    polling: 100,
  });
}

/** `__leaseFence.summary()` of the page. @throws when the hook is not installed. */
export async function readSummary(page: Page): Promise<DashboardSummary> {
  return page.evaluate(() => {
    const hook = (globalThis as unknown as DashboardGlobal).__leaseFence;
    if (hook === undefined) throw new Error('window.__leaseFence is not installed');
    return hook.summary();
  });
}

/**
 * Reads the page's summary until `predicate` holds.
 *
 * @returns The first summary that satisfies it.
 * @throws Error with `description` and the last summary once the timeout passed.
 */
export async function waitForSummary(
  page: Page,
  predicate: (summary: DashboardSummary) => boolean,
  description: string,
  options: PageWaitOptions = {},
): Promise<DashboardSummary> {
  const timeout = options.timeoutMillis ?? 30_000;
  let last: DashboardSummary | undefined;
  try {
    return await vi.waitFor(
      async () => {
        last = await readSummary(page);
        if (!predicate(last)) throw new Error('not yet');
        return last;
      },
      { timeout, interval: 200 },
    );
  } catch (error) {
    throw new Error(
      `the dashboard did not reach "${description}" within ${timeout} ms; last summary ${JSON.stringify(last)}: ${String(error)}`,
      { cause: error },
    );
  }
}

/** What the lanes canvas has drawn. */
export interface CanvasInk {
  /** Backing store size, device pixels. */
  readonly width: number;
  readonly height: number;
  /** Pixels whose colour differs from the most common one (the background). */
  readonly inkPixels: number;
  /** Distinct colours among the ink pixels. */
  readonly colours: number;
  /** For each colour asked about (any CSS colour), the pixels painted exactly in it. */
  readonly pixelsOf: readonly number[];
}

/** The minimal canvas surface read in the page (the test project has no DOM types). */
interface CanvasLike {
  readonly width: number;
  readonly height: number;
  getContext(kind: '2d'): {
    fillStyle: string;
    fillRect(x: number, y: number, width: number, height: number): void;
    getImageData(x: number, y: number, width: number, height: number): { readonly data: ArrayLike<number> };
  } | null;
}

/**
 * Reads the pixels of the `lanes-canvas`: how much is drawn, and how many pixels are painted in
 * each of `colours` (e.g. the holders' bar colours).
 */
export async function readCanvasInk(page: Page, colours: readonly string[] = []): Promise<CanvasInk> {
  return readInkOf(page.getByTestId('lanes-canvas'), colours);
}

/** {@link readCanvasInk} of any canvas element (e.g. a legend swatch). */
export async function readInkOf(canvasElement: Locator, colours: readonly string[] = []): Promise<CanvasInk> {
  return canvasElement.evaluate((element, wanted) => {
    const canvas = element as unknown as CanvasLike;
    const document = (globalThis as unknown as { document: { createElement(tag: 'canvas'): CanvasLike } }).document;
    const rgbaOf = (data: ArrayLike<number>, i: number): number =>
      (((data[i] ?? 0) << 24) | ((data[i + 1] ?? 0) << 16) | ((data[i + 2] ?? 0) << 8) | (data[i + 3] ?? 0)) >>> 0;
    // The browser turns each CSS colour into the exact pixel it paints with.
    const scratch = document.createElement('canvas').getContext('2d');
    const wantedPixels = wanted.map((colour) => {
      if (scratch === null) return undefined;
      scratch.fillStyle = colour;
      scratch.fillRect(0, 0, 1, 1);
      return rgbaOf(scratch.getImageData(0, 0, 1, 1).data, 0);
    });
    const ctx = canvas.getContext('2d');
    if (ctx === null || canvas.width === 0 || canvas.height === 0)
      return { width: canvas.width, height: canvas.height, inkPixels: 0, colours: 0, pixelsOf: wanted.map(() => 0) };
    const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
    const counts = new Map<number, number>();
    for (let i = 0; i < data.length; i += 4) {
      const rgba = rgbaOf(data, i);
      counts.set(rgba, (counts.get(rgba) ?? 0) + 1);
    }
    let background = 0;
    for (const count of counts.values()) background = Math.max(background, count);
    return {
      width: canvas.width,
      height: canvas.height,
      inkPixels: data.length / 4 - background,
      colours: counts.size - 1,
      pixelsOf: wantedPixels.map((rgba) => (rgba === undefined ? 0 : (counts.get(rgba) ?? 0))),
    };
  }, colours);
}

/** One "who held `resource` at `wallMillis`" question put to the page and to the fold. */
interface HoldingProbe {
  readonly resource: string;
  readonly wallMillis: number;
}

/**
 * Asserts that the page, viewing the log as of the last of `events` (a paused or `?at=` view),
 * shows exactly what the dashboard's fold of those events gives: the same position, lane,
 * generation, rejection and restart counts, fence counter and anomalies (none), and, for every
 * generation, the same answer to "who held the resource" at its start and at its middle (holder,
 * fence, grant, renewals, expiry, end, restarts carried across). A missing or repeated event
 * changes one of these. Call it on a view that no longer changes: as of a position below the last
 * loaded one, or paused with the hold in effect (the live fold is updated in place).
 *
 * @param events - Positions 1 … P of the log, as `/v1/events` serves them.
 * @returns The fold, for further checks.
 */
export async function expectPageMatchesFold(page: Page, events: readonly RecordedEvent[]): Promise<ViewState> {
  const state = foldEvents(events);
  const probes: HoldingProbe[] = [...state.lanes.values()].flatMap((lane) =>
    lane.generations.flatMap((generation) => [
      { resource: lane.resource, wallMillis: generation.startWallMillis },
      { resource: lane.resource, wallMillis: (generation.startWallMillis + generation.endWallMillis) / 2 },
    ]),
  );
  const seen = JSON.parse(
    await page.evaluate((questions: readonly HoldingProbe[]) => {
      const hook = (globalThis as unknown as DashboardGlobal).__leaseFence;
      if (hook === undefined) throw new Error('window.__leaseFence is not installed');
      // One synchronous read: the view cannot change between the summary and the answers.
      return JSON.stringify({
        summary: hook.summary(),
        answers: questions.map((q) => hook.whoHeld(q.resource, q.wallMillis)),
      });
    }, probes),
  ) as { summary: DashboardSummary; answers: unknown[] };

  expect(seen.summary).toMatchObject({
    position: state.position,
    lanes: state.lanes.size,
    generations: [...state.lanes.values()].reduce((sum, lane) => sum + lane.generations.length, 0),
    rejections: state.rejections.length,
    restarts: state.restarts.length,
    fenceCounter: state.fenceCounter,
    anomalies: 0,
  });
  expect(state.anomalyCount).toBe(0);
  expect(seen.answers).toEqual(JSON.parse(JSON.stringify(probes.map((q) => whoHeld(state, q.resource, q.wallMillis)))));
  return state;
}
