/**
 * The dashboard's gates panel in Chromium against a real coordinator (built app, ephemeral port,
 * temp SQLite log) and a real `lease-fence-gate` sidecar (built `apps/gate`) in front of a
 * recording upstream: the empty state before any gate reports, then the gate's row with its floor
 * after an admitted write, and its invalid-token count after a forged token — each as the gate
 * reports it (every 200 ms here) and the page polls `GET /v1/gates`.
 *
 * Without Chromium the suite is skipped with the reason, except with `CI=true`, where it fails
 * (`support/demo-browser-suite.ts`).
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGate, type GateProcess } from '../gate/support/gate-process.js';
import { startRecordingUpstream, type RecordingUpstream } from '../gate/support/recording-upstream.js';
import { coordinatorHttp } from '../support/coordinator-http.js';
import { startCoordinator, type RunningCoordinator } from '../support/coordinator-process.js';
import { createTempDir, removeTempDir } from '../support/temp-dir.js';
import { TEST_TOKENS, writeTokensFile } from '../support/test-tokens.js';
import { launchChromium, type LaunchedChromium } from './support/chromium.js';
import { dashboardUrl, openDashboard } from './support/dashboard-page.js';
import { SKIP_BROWSER_SUITES, UI_TIMEOUT_MILLIS } from './support/demo-browser-suite.js';
import { DASHBOARD_DIST } from './support/demo-stack.js';

const RESOURCE = 'deploy-gates-panel';

describe.skipIf(SKIP_BROWSER_SUITES)('the dashboard gates panel, against a real sidecar', () => {
  let dir: string;
  let coordinator: RunningCoordinator;
  let upstream: RecordingUpstream;
  let gate: GateProcess | undefined;
  let browser: LaunchedChromium;
  let page: Page;

  beforeAll(async () => {
    dir = await createTempDir('lease-fence-e2e-gates-');
    const tokensFile = await writeTokensFile(dir);
    coordinator = await startCoordinator({
      env: { LEASE_FENCE_TOKENS_FILE: tokensFile, LEASE_FENCE_DASHBOARD_DIR: DASHBOARD_DIST },
    });
    upstream = await startRecordingUpstream();
    browser = await launchChromium();
    page = await browser.firstPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await gate?.stop();
    await upstream?.close();
    await coordinator?.cleanup();
    if (dir !== undefined) await removeTempDir(dir);
  });

  const row = () =>
    page.locator(`[data-testid="gate-row"][data-gate="${TEST_TOKENS.gate.gateId}"][data-resource="${RESOURCE}"]`);

  it('says no gate reports before one does', async () => {
    await openDashboard(page, dashboardUrl(coordinator.url, {}, TEST_TOKENS.viewer.token));

    await expect
      .poll(() => page.getByTestId('gates-empty').textContent(), { timeout: UI_TIMEOUT_MILLIS })
      .toContain('No gate has reported to this coordinator');
  });

  it("shows the gate's row with its floor after an admitted write, and its invalid-token count after a forged token", async () => {
    // Given a sidecar reporting every 200 ms
    gate = await startGate({
      LEASE_FENCE_GATE_RESOURCE: RESOURCE,
      LEASE_FENCE_GATE_UPSTREAM: upstream.url,
      LEASE_FENCE_COORDINATOR_URL: coordinator.url,
      LEASE_FENCE_GATE_TOKEN: TEST_TOKENS.gate.token,
      LEASE_FENCE_DATA_DIR: join(dir, 'gate'),
      LEASE_FENCE_GATE_STATUS_REPORT_MILLIS: '200',
    });
    const acquired = await coordinatorHttp(coordinator.url, TEST_TOKENS.agentA.token).post<{
      grant: { fence: number; signedToken: string };
    }>(`/v1/leases/${RESOURCE}/acquire`, { requestId: 'gates-panel-1', ttlMillis: 60_000 });
    const { fence, signedToken } = acquired.body.grant;

    // When agent-a writes through it
    const admitted = await fetch(`${gate.url}/deployments`, {
      method: 'POST',
      headers: { 'lease-fence-token': signedToken },
      body: 'v1',
    });

    // Then the panel shows the gate's row with the floor, and no invalid token yet
    expect(admitted.status).toBe(200);
    await expect
      .poll(() => row().getByTestId('gate-floor').textContent(), { timeout: UI_TIMEOUT_MILLIS })
      .toBe(`agent-a · ${fence}`);
    expect(await row().getByTestId('gate-invalid-tokens').textContent()).toBe('0');
    expect(await row().getByTestId('gate-last-contact').textContent()).toMatch(/just now|\d+ s ago/);

    // When a forged token (its signature altered) is sent
    const [header, payload, signature] = signedToken.split('.') as [string, string, string];
    const altered = Buffer.from(signature, 'base64url');
    altered[0] = (altered[0] ?? 0) ^ 0xff;
    const forged = await fetch(`${gate.url}/deployments`, {
      method: 'POST',
      headers: { 'lease-fence-token': `${header}.${payload}.${altered.toString('base64url')}` },
      body: 'forged',
    });

    // Then it was refused, never forwarded, and the panel counts it
    expect(forged.status).toBe(401);
    expect(upstream.received.map((request) => request.body)).toEqual(['v1']);
    await expect
      .poll(() => row().getByTestId('gate-invalid-tokens').textContent(), { timeout: UI_TIMEOUT_MILLIS })
      .toBe('1');
    expect(await row().getByTestId('gate-floor').textContent()).toBe(`agent-a · ${fence}`);
    expect(await page.getByTestId('gates-empty').count()).toBe(0);
    expect(browser.problems).toEqual([]);
  }, 120_000);
});
