/**
 * Benchmarks at the dashboard's scale target (prints figures; asserts nothing):
 * `npx vitest bench --run` in apps/dashboard. The browser figures the issue asks for (first paint,
 * p95 frame while panning and while receiving 2 000 events/s) are measured in Chromium; these are
 * the pure parts under Node.
 */
import { bench, describe } from 'vitest';
import {
  compileLeaseMatch,
  countMatches,
  exposureSummaries,
  foldEvents,
  filterLanes,
  MatchingEvents,
  SCALE_TARGET,
  searchLog,
  synthesizeEvents,
  ViewHistory,
} from '@lease-fence/dashboard-model';
import { layoutLane, visibleRows } from '../timeline/lane-layout.js';

/** About 900 000 events: 500 lanes, 112 000 generations with their renewals, 2 000 rejections, 3 restarts. */
const million = synthesizeEvents({ seed: 1, resources: 500, generations: 112_000, rejections: 2_000, restarts: 3 });
/** The scale target of the lanes: 500 lanes, 20 000 generations, 2 000 rejections. */
const target = foldEvents(synthesizeEvents({ seed: 2, ...SCALE_TARGET }));
const history = new ViewHistory();
for (const e of million) history.append(e);
const lanes = filterLanes(target, {}).lanes;
const walls = lanes.flatMap((l) => l.generations.map((g) => g.startWallMillis));
const byHolder = compileLeaseMatch({ holder: 'coder' });
const whole = { fromWallMillis: Math.min(...walls), toWallMillis: Math.max(...walls) };

describe(`fold (${million.length} events)`, () => {
  bench('foldEvents: the whole log', () => void foldEvents(million), { iterations: 3, warmupIterations: 1 });
  bench(
    'ViewHistory.stateAt: jump to a random position (checkpoint every 10 000)',
    () => {
      void history.stateAt(1 + Math.floor(Math.random() * history.position));
    },
    { iterations: 20 },
  );
});

describe('lanes at the scale target (500 lanes, 20 000 bars, 2 000 rejections)', () => {
  bench('layout of the rows in view (a 460 px viewport), whole log in 1 300 px', () => {
    const { first, last } = visibleRows(0, 460, 22, lanes.length);
    for (let i = first; i < last; i += 1) layoutLane(lanes[i]!, { window: whole, widthPx: 1_300 });
  });
  bench(
    'layout of all 500 lanes, whole log in 1 300 px',
    () => {
      for (const lane of lanes) layoutLane(lane, { window: whole, widthPx: 1_300 });
    },
    { iterations: 20 },
  );
  bench('layout of the rows in view with a holder filter (bars dimmed or not), whole log in 1 300 px', () => {
    const { first, last } = visibleRows(0, 460, 22, lanes.length);
    for (let i = first; i < last; i += 1) layoutLane(lanes[i]!, { window: whole, widthPx: 1_300, match: byHolder });
  });
  bench('count the leases and rejections a holder filter matches in all 500 lanes', () => {
    void countMatches(lanes, byHolder);
  });
  bench(
    'match the events of a holder over the ~900 000-event log (first scan; later renders scan only new events)',
    () => void new MatchingEvents(byHolder).update(history.index.events()),
    { iterations: 5 },
  );
  bench('exposure panel rows (p50/p99/max per lane, worst first): its once-a-second cost while live', () => {
    void exposureSummaries(target);
  });
  bench(
    'filter lanes by holder, rejections and fence range',
    () => void filterLanes(target, { holder: 'coder', hasRejections: true, fenceMin: 1_000, fenceMax: 15_000 }),
  );
  bench(
    'search a requestId over the ~900 000-event log',
    () => void searchLog(history.head, history.index, 'req-not-there'),
    { iterations: 10 },
  );
});
