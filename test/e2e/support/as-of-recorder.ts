/**
 * Records every as-of position the dashboard renders, as it renders it: a `MutationObserver` in
 * the page on the live controls (`data-position` of `as-of`, `data-live` of `live-controls`). A
 * replay moves the view on its own timer, so sampling the summary from the test could miss a
 * step or see one late; the observer sees each committed render once, in order.
 */
import type { Page } from 'playwright-core';

/** One rendered as-of point. */
export interface AsOfSample {
  /** The position the view was folded to. */
  readonly position: number;
  /** True when the view followed the head of the log. */
  readonly live: boolean;
}

/** A recording in progress. */
export interface AsOfRecording {
  /** The samples so far, in render order. */
  samples(): Promise<readonly AsOfSample[]>;
  /** Disconnects the observer. */
  stop(): Promise<void>;
}

/** The parts of the DOM used in the page (the test project has no DOM types). */
interface ElementLike {
  getAttribute(name: string): string | null;
  querySelector(selector: string): ElementLike | null;
}
interface RecorderGlobal {
  readonly document: { querySelector(selector: string): ElementLike | null };
  readonly MutationObserver: new (callback: () => void) => {
    observe(target: ElementLike, options: object): void;
    disconnect(): void;
  };
  __asOfRecording?: { readonly samples: AsOfSample[]; readonly disconnect: () => void };
}

/**
 * Starts recording the as-of points `page` renders from now on (one recording per page at a time;
 * starting another replaces it).
 *
 * @throws Error when the page has no live controls (the dashboard is not showing a log).
 */
export async function recordAsOf(page: Page): Promise<AsOfRecording> {
  await page.evaluate(() => {
    const g = globalThis as unknown as RecorderGlobal;
    g.__asOfRecording?.disconnect();
    const controls = g.document.querySelector('[data-testid="live-controls"]');
    if (controls === null) throw new Error('recordAsOf: the page has no [data-testid="live-controls"]');
    const samples: AsOfSample[] = [];
    const observer = new g.MutationObserver(() => {
      const position = Number(controls.querySelector('[data-testid="as-of"]')?.getAttribute('data-position'));
      const live = controls.getAttribute('data-live') === 'true';
      const last = samples[samples.length - 1];
      if (last === undefined || last.position !== position || last.live !== live) samples.push({ position, live });
    });
    observer.observe(controls, { attributes: true, subtree: true, attributeFilter: ['data-position', 'data-live'] });
    g.__asOfRecording = { samples, disconnect: () => observer.disconnect() };
  });
  return {
    samples: () => page.evaluate(() => [...((globalThis as unknown as RecorderGlobal).__asOfRecording?.samples ?? [])]),
    stop: () => page.evaluate(() => (globalThis as unknown as RecorderGlobal).__asOfRecording?.disconnect()),
  };
}
