/**
 * What the browser suites share: one demo stack (the built coordinator on a SQLite log in a temp
 * dir, and the demo's agents), a reader of its `/v1/events`, and one Chromium with a fresh
 * profile, started once per suite; after each test, no console error or uncaught error in the
 * page unless the test allowed it. Starting the stack and waiting for the demo's first refusal is
 * most of a suite's cost, so its tests share them and run in order.
 *
 * Without Chromium a suite is skipped with the reason, except with `CI=true`, where it fails.
 */
import type { CoordinatorEventType, EventOf, RecordedEvent } from '@lease-fence/protocol';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { chromiumMissingReason, launchChromium, type LaunchedChromium, type PageProblem } from './chromium.js';
import { startDemoStack, type DemoStack, type DemoStackOptions } from './demo-stack.js';
import { EventLogReader } from './event-log-reader.js';

/** A recorded event of one type, narrowed. */
export type RecordedOf<T extends CoordinatorEventType> = RecordedEvent & { readonly event: EventOf<T> };

/** A type guard for recorded events of `type`. */
export const isType =
  <T extends CoordinatorEventType>(type: T) =>
  (recorded: RecordedEvent): recorded is RecordedOf<T> =>
    recorded.event.type === type;

/** How long to wait for the page to show something, milliseconds (generous: a loaded 2-core machine). */
export const UI_TIMEOUT_MILLIS = 30_000;

const MISSING_CHROMIUM = chromiumMissingReason();
const REQUIRE_BROWSER = process.env.CI === 'true';

/** Whether the browser suites are skipped here (no Chromium, and not in CI). */
export const SKIP_BROWSER_SUITES = MISSING_CHROMIUM !== undefined && !REQUIRE_BROWSER;
if (SKIP_BROWSER_SUITES) console.warn(`test/e2e skipped: ${MISSING_CHROMIUM}`);

/** The shared stack of a suite, valid inside its tests (after `beforeAll`). */
export interface DemoBrowser {
  readonly stack: DemoStack;
  readonly log: EventLogReader;
  readonly browser: LaunchedChromium;
  /** The browser's first page. */
  readonly page: Page;
  /** Allows page problems matching `pattern` (console text; never uncaught errors) until the end of the current test. */
  allowProblems(pattern: RegExp): void;
  /**
   * The demo's first refused stale write (the same one for every test of the suite), once the log
   * holds `eventsAfter` more events after it. A failure carries the demo's output.
   */
  firstRejection(eventsAfter?: number): Promise<RecordedOf<'FenceRejected'>>;
}

/**
 * Registers the suite's `beforeAll` / `afterEach` / `afterAll` (call it inside its `describe`).
 * @param beforeStart - Runs first in `beforeAll` (e.g. creating an artifacts folder).
 * @param stackOptions - Options of the demo stack (e.g. more coordinator settings). @defaultValue none
 */
export function useDemoBrowser(beforeStart?: () => Promise<void>, stackOptions: DemoStackOptions = {}): DemoBrowser {
  let stack: DemoStack | undefined;
  let log: EventLogReader | undefined;
  let browser: LaunchedChromium | undefined;
  let page: Page | undefined;
  let problemsChecked = 0;
  let allowed: RegExp | undefined;
  let rejection: Promise<RecordedOf<'FenceRejected'>> | undefined;

  beforeAll(async () => {
    if (MISSING_CHROMIUM !== undefined)
      throw new Error(`CI=true requires the browser tests to run: ${MISSING_CHROMIUM}`);
    await beforeStart?.();
    stack = await startDemoStack(stackOptions);
    log = new EventLogReader(stack.url, stack.viewerToken);
    browser = await launchChromium();
    page = await browser.firstPage();
  }, 90_000);

  afterEach(() => {
    const problems = (browser?.problems ?? [])
      .slice(problemsChecked)
      .filter((problem) => allowed === undefined || problem.kind === 'pageerror' || !allowed.test(problem.text));
    problemsChecked = browser?.problems.length ?? 0;
    allowed = undefined;
    expect(problems, 'console errors or uncaught errors in the page').toEqual([] satisfies PageProblem[]);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  }, 60_000);

  const started = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`useDemoBrowser: ${name} is read before beforeAll started the stack`);
    return value;
  };

  return {
    get stack() {
      return started(stack, 'stack');
    },
    get log() {
      return started(log, 'log');
    },
    get browser() {
      return started(browser, 'browser');
    },
    get page() {
      return started(page, 'page');
    },
    allowProblems(pattern) {
      allowed = pattern;
    },
    async firstRejection(eventsAfter = 0) {
      const reader = started(log, 'log');
      const demo = started(stack, 'stack');
      rejection ??= reader
        .waitFor(isType('FenceRejected'), { description: 'a FenceRejected from the demo', timeoutMillis: 90_000 })
        .catch((error: unknown) => {
          throw new Error(`${String(error)}\n--- demo output ---\n${demo.demoOutput()}`, { cause: error });
        });
      const first = await rejection;
      if (eventsAfter > 0) {
        await reader.waitUntil(() => (reader.head >= first.position + eventsAfter ? true : undefined), {
          description: `${eventsAfter} events after position ${first.position}`,
        });
      }
      return first;
    },
  };
}
