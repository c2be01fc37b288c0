/**
 * Debian's Chromium driven by playwright-core: a fresh temporary profile per launch (removed on
 * close), headless, no network beyond what the page asks for, and every console error and
 * uncaught page error collected so a test can assert the page stayed clean.
 *
 * Never `npx playwright install`: the browser is the system's (`apt-get install -y chromium`,
 * which `.ci/run` does when it is missing). The launch flags are below.
 */
import { existsSync } from 'node:fs';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createTempDir, removeTempDir } from '../../support/temp-dir.js';

/** The Chromium binary: `CHROMIUM_PATH`, else Debian's `/usr/bin/chromium`. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The launch flags: headless, no sandbox (containers), no GPU, no background traffic. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/**
 * Why the browser tests cannot run here, or undefined when they can.
 *
 * @returns A sentence naming the missing binary and how to install it.
 */
export function chromiumMissingReason(): string | undefined {
  return existsSync(CHROMIUM_PATH)
    ? undefined
    : `no Chromium at ${CHROMIUM_PATH}: install it with \`apt-get install -y chromium\` (never \`npx playwright install\`), or set CHROMIUM_PATH`;
}

/** A console error or uncaught exception seen in a page. */
export interface PageProblem {
  readonly kind: 'console' | 'pageerror';
  readonly text: string;
  /** Where it came from (the console message's source URL), when known. */
  readonly url: string | undefined;
}

/** A running Chromium with its own profile: a separate browser, sharing no storage with any other. */
export interface LaunchedChromium {
  readonly context: BrowserContext;
  /** Console errors and page errors so far, in order (the automatic `/favicon.ico` 404 excluded). */
  readonly problems: readonly PageProblem[];
  /** The context's first tab (a persistent context opens one). */
  firstPage(): Promise<Page>;
  /** Closes the browser and removes its profile directory. */
  close(): Promise<void>;
}

/** Options of {@link launchChromium}. */
export interface LaunchChromiumOptions {
  /** Page size in CSS pixels. @defaultValue 1400 × 1000 */
  readonly viewport?: { readonly width: number; readonly height: number };
}

/**
 * Launches Chromium on a fresh temporary profile.
 *
 * @throws Error from {@link chromiumMissingReason} when the binary is missing, or playwright's launch error.
 */
export async function launchChromium(options: LaunchChromiumOptions = {}): Promise<LaunchedChromium> {
  const missing = chromiumMissingReason();
  if (missing !== undefined) throw new Error(missing);
  const profileDir = await createTempDir('lease-fence-e2e-chromium-');
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: options.viewport?.width ?? 1400, height: options.viewport?.height ?? 1000 },
    });
  } catch (error) {
    await removeTempDir(profileDir);
    throw error;
  }
  const problems: PageProblem[] = [];
  context.on('console', (message) => {
    if (message.type() !== 'error') return;
    const url = message.location().url;
    // Chromium asks for /favicon.ico by itself; the dashboard ships none.
    if (url.endsWith('/favicon.ico')) return;
    problems.push({ kind: 'console', text: message.text(), url: url === '' ? undefined : url });
  });
  context.on('weberror', (webError) => {
    problems.push({ kind: 'pageerror', text: String(webError.error()), url: webError.page()?.url() });
  });
  return {
    context,
    problems,
    firstPage: async () => context.pages()[0] ?? (await context.newPage()),
    close: async () => {
      try {
        await context.close();
      } finally {
        await removeTempDir(profileDir);
      }
    },
  };
}
