/**
 * The dashboard's exposure panel in Chromium against the demo (its deploy slots behind real
 * `lease-fence-gate` sidecars) and one fence-first resource driven here with the SDK's gate link:
 * the panel's figures, live and as of random log positions, equal an exposure computation of this
 * file over `/v1/events` (written from the definition, not with the dashboard's model), and the
 * fence-first handover shows 0.
 *
 * Definition: at a `LeaseGranted` of fence F on a resource that had a holder before, the resource
 * is exposed until the first event showing its gate floor at or above F (`FenceAdmitted` fence,
 * `FenceFloorReported` fence, `FenceRejected` current fence); unknown when the generation ends
 * first (release or expiry of F, the next grant, a restart that does not carry it).
 *
 * Without Chromium the suite is skipped with the reason, except with `CI=true`, where it fails
 * (`support/demo-browser-suite.ts`).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openFileFloorStore, openGateLink, type GateLink } from '@lease-fence/client';
import type { ExposureSummary } from '@lease-fence/dashboard-model';
import { nearestRankPercentile } from '@lease-fence/dashboard-model/testing';
import fc from 'fast-check';
import type { RecordedEvent } from '@lease-fence/protocol';
import { FenceGate } from 'lease-fence';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coordinatorHttp } from '../support/coordinator-http.js';
import { REPO_ROOT } from '../support/coordinator-process.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { dashboardUrl, openDashboard, waitForSummary } from './support/dashboard-page.js';
import { SKIP_BROWSER_SUITES, UI_TIMEOUT_MILLIS, useDemoBrowser } from './support/demo-browser-suite.js';
import { E2E_TOKENS, type DemoStack } from './support/demo-stack.js';
import type { EventLogReader } from './support/event-log-reader.js';

const ARTIFACTS_DIR = fileURLToPath(new URL('./artifacts/', import.meta.url));
const UPDATE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';
/** The fence-first resource (the demo's gate token covers `deploy-*`; the demo's agents never use it). */
const FENCE_FIRST_RESOURCE = 'deploy-fence-first';
/** How many random `?at=` positions are checked. */
const RANDOM_POSITIONS = 20;

/** One row of the panel, or of the computation here (the dashboard model's row shape; only the type is shared). */
type ExposureRow = ExposureSummary;

/** The exposure rows of `events` (positions 1 … P), per resource with a handover, sorted by resource. */
function exposureRowsOf(events: readonly RecordedEvent[]): ExposureRow[] {
  interface Window {
    fence: number;
    holderId: string;
    granted: RecordedEvent['event']['data'];
    fenceFirst: boolean;
    status: 'open' | 'closed' | 'unknown';
    millis?: number;
  }
  const hadHolder = new Set<string>();
  const floor = new Map<string, number>();
  const reserved = new Map<string, number>();
  /** The window of each resource's current generation while that generation is open. */
  const current = new Map<string, Window>();
  const windows = new Map<string, Window[]>();
  const end = (resource: string): void => {
    const w = current.get(resource);
    if (w?.status === 'open') w.status = 'unknown';
    current.delete(resource);
  };
  for (const { event } of events) {
    if (event.type === 'CoordinatorStarted') {
      for (const [resource, w] of current) {
        const carried = event.data.carriedLeases.some(
          (c) => c.resource === resource && c.fence === w.fence && c.holderId === w.holderId,
        );
        if (!carried) end(resource);
      }
      for (const c of event.data.carriedLeases) hadHolder.add(c.resource);
      continue;
    }
    if (!('resource' in event.data)) continue;
    const d = event.data;
    const resource = d.resource;
    let seenFloor: number | undefined;
    switch (event.type) {
      case 'LeaseGranted': {
        end(resource);
        const fence = event.data.fence;
        if (hadHolder.has(resource)) {
          const atFloor = (floor.get(resource) ?? 0) >= fence;
          const w: Window = {
            fence,
            holderId: event.data.holderId,
            granted: d,
            fenceFirst: reserved.get(resource) === fence,
            status: atFloor ? 'closed' : 'open',
            ...(atFloor ? { millis: 0 } : {}),
          };
          windows.set(resource, [...(windows.get(resource) ?? []), w]);
          current.set(resource, w);
        }
        reserved.delete(resource);
        hadHolder.add(resource);
        break;
      }
      case 'LeaseReleased':
      case 'LeaseExpired': {
        const w = current.get(resource);
        if (w !== undefined && w.fence === event.data.fence && w.holderId === event.data.holderId) end(resource);
        hadHolder.add(resource);
        break;
      }
      case 'LeaseRenewed':
        hadHolder.add(resource);
        break;
      case 'FenceReserved':
        reserved.set(resource, event.data.fence);
        break;
      case 'FenceBurned':
        if (reserved.get(resource) === event.data.fence) reserved.delete(resource);
        break;
      case 'FenceAdmitted':
      case 'FenceFloorReported':
        seenFloor = event.data.fence;
        break;
      case 'FenceRejected':
        seenFloor = event.data.current.fence;
        break;
      default:
        break;
    }
    if (seenFloor === undefined) continue;
    floor.set(resource, Math.max(floor.get(resource) ?? 0, seenFloor));
    const w = current.get(resource);
    if (w?.status === 'open' && seenFloor >= w.fence) {
      w.status = 'closed';
      const g = w.granted;
      w.millis = Math.max(0, g.bootId === d.bootId ? d.atMillis - g.atMillis : d.wallMillis - g.wallMillis);
    }
  }
  return [...windows]
    .map(([resource, list]): ExposureRow => {
      const measured = list.flatMap((w) => (w.millis === undefined ? [] : [w.millis])).sort((a, b) => a - b);
      return {
        resource,
        handovers: list.length,
        measured: measured.length,
        unknown: list.filter((w) => w.status === 'unknown').length,
        open: list.filter((w) => w.status === 'open').length,
        fenceFirst: list.filter((w) => w.fenceFirst).length,
        p50Millis: nearestRankPercentile(measured, 50),
        p99Millis: nearestRankPercentile(measured, 99),
        maxMillis: measured.at(-1),
      };
    })
    .sort((a, b) => (a.resource < b.resource ? -1 : 1));
}

/** The part of a DOM element read here (the test project has no DOM types). */
interface ElementLike {
  getAttribute(name: string): string | null;
  querySelectorAll(selector: string): ArrayLike<ElementLike>;
}

/** The panel's position and rows, read in one synchronous step (the page cannot change between them). */
async function readPanel(page: Page): Promise<{ position: number; rows: ExposureRow[] }> {
  return page.evaluate(() => {
    const doc = (globalThis as unknown as { document: { querySelector(selector: string): ElementLike | null } })
      .document;
    const panel = doc.querySelector('[data-testid="exposure-panel"]');
    if (panel === null) throw new Error('no exposure panel on the page');
    const count = (el: ElementLike, name: string): number => Number(el.getAttribute(`data-${name}`));
    const millis = (el: ElementLike, name: string): number | undefined => {
      const value = el.getAttribute(`data-${name}`);
      return value === null || value === '' ? undefined : Number(value);
    };
    const rows = Array.from(panel.querySelectorAll('[data-testid="exposure-row"]'), (el) => ({
      resource: el.getAttribute('data-resource') ?? '',
      handovers: count(el, 'handovers'),
      measured: count(el, 'measured'),
      unknown: count(el, 'unknown'),
      open: count(el, 'open'),
      fenceFirst: count(el, 'fence-first'),
      p50Millis: millis(el, 'p50-millis'),
      p99Millis: millis(el, 'p99-millis'),
      maxMillis: millis(el, 'max-millis'),
    }));
    return { position: Number(panel.getAttribute('data-position')), rows };
  });
}

const tokenOf = (predicate: (entry: (typeof E2E_TOKENS)[number]) => boolean): string => {
  const entry = E2E_TOKENS.find(predicate);
  if (entry === undefined) throw new Error('no such token in the e2e tokens');
  return entry.token;
};

describe.skipIf(SKIP_BROWSER_SUITES)('the dashboard exposure panel, against the demo and its sidecars', () => {
  const suite = useDemoBrowser(() => mkdir(ARTIFACTS_DIR, { recursive: true }).then(() => undefined), {
    coordinatorEnv: { LEASE_FENCE_FENCE_FIRST: FENCE_FIRST_RESOURCE },
  });
  let stack: DemoStack;
  let log: EventLogReader;
  let page: Page;
  let floorDir: string | undefined;
  let link: GateLink | undefined;

  beforeAll(async () => {
    ({ stack, log, page } = suite);
    // A fence-first handover: agent-1 holds the resource, releases it, then agent-2 acquires it;
    // each grant waits for this gate (over its gate link) to admit the fence.
    floorDir = await createTempDir('lease-fence-e2e-exposure-');
    const store = await openFileFloorStore({ path: join(floorDir, 'floor.json'), resource: FENCE_FIRST_RESOURCE });
    link = openGateLink({
      baseUrl: stack.url,
      token: tokenOf((e) => e.role === 'gate'),
      guards: [{ gate: new FenceGate(FENCE_FIRST_RESOURCE), store }],
    });
    await link.whenGuarding();
    for (const [index, holderId] of [
      [1, 'agent-1'],
      [2, 'agent-2'],
    ] as const) {
      const agent = coordinatorHttp(
        stack.url,
        tokenOf((e) => e.role === 'agent' && e.holderId === holderId),
      );
      const path = `/v1/leases/${FENCE_FIRST_RESOURCE}`;
      const acquired = await agent.post<{ grant: { fence: number } }>(`${path}/acquire`, {
        requestId: `exposure-${index}`,
        ttlMillis: 60_000,
      });
      expect(acquired.status, acquired.text).toBe(200);
      const released = await agent.post(`${path}/release`, { fence: acquired.body.grant.fence });
      expect(released.status, released.text).toBe(200);
    }
    // The demo's slots: wait for a refusal (a measured window) and some handovers after it.
    await suite.firstRejection(60);
  }, 180_000);

  afterAll(async () => {
    await link?.close();
    if (floorDir !== undefined) await removeTempDir(floorDir);
  });

  it('shows live the exposure the log gives as of the position it names, with 0 for the fence-first handover', async () => {
    // When
    await openDashboard(page, dashboardUrl(stack.url, {}, stack.viewerToken));
    const head = await log.refresh();
    await waitForSummary(page, (s) => s.connection === 'live' && s.live && s.position >= head, `live at ${head}`);
    let panel = await readPanel(page);
    await expect
      .poll(
        async () => {
          panel = await readPanel(page);
          return panel.position >= head;
        },
        { timeout: UI_TIMEOUT_MILLIS },
      )
      .toBe(true);
    if (panel.position > log.head) await log.refresh();

    // Then
    const expected = exposureRowsOf(log.upTo(panel.position));
    const sorted = [...panel.rows].sort((a, b) => (a.resource < b.resource ? -1 : 1));
    expect(sorted, `live, as of position ${panel.position}`).toEqual(expected);
    expect(expected.find((r) => r.resource === FENCE_FIRST_RESOURCE)).toEqual({
      resource: FENCE_FIRST_RESOURCE,
      handovers: 1,
      measured: 1,
      unknown: 0,
      open: 0,
      fenceFirst: 1,
      p50Millis: 0,
      p99Millis: 0,
      maxMillis: 0,
    });
    expect(
      expected.some((r) => r.resource.startsWith('deploy-slot') && (r.maxMillis ?? 0) > 0),
      'a demo slot with a measured window (a gate refusal after a handover)',
    ).toBe(true);
    // Worst first: the rows come in order of their longest window.
    const maxima = panel.rows.map((r) => r.maxMillis ?? -1);
    expect(maxima).toEqual([...maxima].sort((a, b) => b - a));
    await page.getByTestId('timeline').screenshot({ path: join(ARTIFACTS_DIR, 'dashboard-exposure-lanes.png') });
    await page.getByTestId('exposure-panel').scrollIntoViewIfNeeded();
    await page.getByTestId('exposure-panel').screenshot({ path: join(ARTIFACTS_DIR, 'dashboard-exposure.png') });
    if (UPDATE_SCREENSHOTS)
      await page.getByTestId('exposure-panel').screenshot({ path: join(REPO_ROOT, 'docs', 'dashboard-exposure.png') });
  }, 120_000);

  it(`shows as of ${RANDOM_POSITIONS} random ?at= positions the exposure the log gives up to each`, async () => {
    const seed = Number(process.env.EXPOSURE_SEED ?? Date.now() % 2 ** 31);
    const head = await log.refresh();
    const positions = fc.sample(fc.integer({ min: 1, max: head - 1 }), { seed, numRuns: RANDOM_POSITIONS });
    for (const position of positions) {
      const context = `as of position ${position} (EXPOSURE_SEED=${seed}, positions ${positions.join(', ')})`;
      // When
      await openDashboard(page, dashboardUrl(stack.url, { at: position }, stack.viewerToken));
      // at least the pinned position: the page loads to the head it first hears, then holds (ingestTarget in apps/dashboard/src/app/navigation.ts), so a head exactly at the pin is held there
      await waitForSummary(
        page,
        (s) => s.connection === 'live' && !s.live && s.position === position && s.loadedPosition >= position,
        context,
      );
      await expect
        .poll(async () => (await readPanel(page)).position, { timeout: UI_TIMEOUT_MILLIS, message: context })
        .toBe(position);

      // Then
      const { rows } = await readPanel(page);
      expect(
        [...rows].sort((a, b) => (a.resource < b.resource ? -1 : 1)),
        context,
      ).toEqual(exposureRowsOf(log.upTo(position)));
    }
  }, 480_000);
});
