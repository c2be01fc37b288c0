/**
 * The dashboard in Chromium against a coordinator whose log has a damaged record older than its
 * latest snapshot (start-up replays only after the snapshot, so the coordinator starts and the
 * damage is found when the stream reads it). The page must name the damaged position and field,
 * say the view is as of the last good position (never "now (live)"), not ask whether the
 * coordinator runs, and keep retrying; the coordinator logs the damage once, not per attempt.
 *
 * Without Chromium the suite is skipped, except with `CI=true`.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCoordinator, startCoordinator } from '../support/coordinator-process.js';
import { coordinatorHttp } from '../support/coordinator-http.js';
import { TEST_TOKENS } from '../support/test-tokens.js';
import { launchChromium, type LaunchedChromium } from './support/chromium.js';
import { dashboardUrl, openDashboard, readSummary } from './support/dashboard-page.js';
import { SKIP_BROWSER_SUITES, UI_TIMEOUT_MILLIS } from './support/demo-browser-suite.js';

/** Events between snapshots: the damaged record is older than the latest one. */
const SNAPSHOT_EVERY = 50;
/** Grants written before the damage (one event each, after `CoordinatorStarted` at 1). */
const GRANTS = 120;
/** The record whose `data` is damaged. */
const DAMAGED_POSITION = 20;

describe.skipIf(SKIP_BROWSER_SUITES)('dashboard on a log with a damaged record', () => {
  /** The first run owns the data directory: its cleanup removes it, after the second run's. */
  let first: RunningCoordinator | undefined;
  let app: RunningCoordinator | undefined;
  let browser: LaunchedChromium | undefined;
  let page: Page;

  beforeAll(async () => {
    // Given a log past two snapshots whose record 20 no longer parses, and a coordinator started on it
    const env = { LEASE_FENCE_SNAPSHOT_EVERY: String(SNAPSHOT_EVERY) };
    first = await startCoordinator({ env });
    const agent = coordinatorHttp(first.url, TEST_TOKENS.agentA.token);
    for (let i = 1; i <= GRANTS; i += 1) {
      const reply = await agent.post(`/v1/leases/slot-${i}/acquire`, { requestId: `grant-${i}`, ttlMillis: 600_000 });
      expect(reply.status).toBe(200);
    }
    await first.stop();
    const db = new Database(join(first.dataDir, 'default.events.sqlite'));
    db.prepare('UPDATE events SET data = ? WHERE position = ?').run('{"bad', DAMAGED_POSITION);
    db.close();
    app = await startCoordinator({ env, dataDir: first.dataDir });
    browser = await launchChromium();
    page = await browser.firstPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.cleanup();
    await first?.cleanup();
  });

  it('names the damaged record, shows the last good position as such, and keeps retrying without asking whether the coordinator runs', async () => {
    // When the dashboard opens and has met the damage on three connections
    const streams: string[] = [];
    page.on('websocket', (socket) => {
      if (socket.url().includes('/v1/stream')) streams.push(socket.url());
    });
    await openDashboard(page, dashboardUrl(app!.url, {}, TEST_TOKENS.viewer.token));
    await expect.poll(() => streams.length, { timeout: UI_TIMEOUT_MILLIS }).toBeGreaterThanOrEqual(3);

    // Then the banner says what is damaged and where, and the view is as of the last good position
    const banner = page.getByTestId('connection-state');
    await expect.poll(() => banner.getAttribute('data-status'), { timeout: UI_TIMEOUT_MILLIS }).toBe('log-damaged');
    const text = await banner.innerText();
    expect(text).toContain(
      `damaged at position ${DAMAGED_POSITION}, field data (event at position ${DAMAGED_POSITION} is corrupt: data`,
    );
    expect(text).toContain(`Showing the log as of position ${DAMAGED_POSITION - 1}, the last good one — not live.`);
    expect(text).not.toContain('Is the coordinator running?');
    expect(await page.getByTestId('holders-as-of').innerText()).not.toContain('now (live)');
    expect(await readSummary(page)).toMatchObject({ loadedPosition: DAMAGED_POSITION - 1 });

    // And every attempt resumed from the last good position (asking for that event again, to check the
    // log is still the one the page loaded), and the coordinator logged the damage once
    expect(streams.slice(1).every((url) => url.includes(`after=${DAMAGED_POSITION - 2}`))).toBe(true);
    const failures = app!.logs.filter((line) => line.msg === 'stream: subscription failed');
    expect(failures).toHaveLength(1);
  });
});
