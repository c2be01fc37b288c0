/**
 * The panels built on recharts (the rate charts, and the investigation view with its generations
 * chart), loaded on first use in chunks of their own so the first paint does not wait for the
 * charting library. Until a chunk arrives its panel shows a placeholder with the same test id,
 * label and (for the investigation) `data-state="loading"` as the panel itself.
 */
import { lazy, Suspense, type ReactElement } from 'react';
import type { InvestigationViewProps } from '../investigation/investigation-view.js';
import type { RatePanelsProps } from '../rates/rate-panels.js';

const RatePanelsChunk = lazy(() =>
  import('../rates/rate-panels.js').then((module) => ({ default: module.RatePanels })),
);
const InvestigationViewChunk = lazy(() =>
  import('../investigation/investigation-view.js').then((module) => ({ default: module.InvestigationView })),
);

/** The rate charts, with a placeholder while its chunk loads. */
export function LazyRatePanels(props: RatePanelsProps): ReactElement {
  const placeholder = (
    <section className="panel rates" aria-label="Rates" data-testid="rates" aria-busy="true">
      <h3>Rates per second</h3>
      <p className="muted">Loading the charts…</p>
    </section>
  );
  return (
    <Suspense fallback={placeholder}>
      <RatePanelsChunk {...props} />
    </Suspense>
  );
}

/** The investigation view, with a placeholder while its chunk loads. */
export function LazyInvestigationView(props: InvestigationViewProps): ReactElement {
  const placeholder = (
    <section
      className="panel investigation"
      data-testid="investigation"
      aria-label="Investigation"
      data-state="loading"
      aria-busy="true"
    >
      <p className="muted">Loading the investigation view…</p>
    </section>
  );
  return (
    <Suspense fallback={placeholder}>
      <InvestigationViewChunk {...props} />
    </Suspense>
  );
}
