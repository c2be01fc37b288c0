/**
 * Tables of search results, in Markdown: the liveness table of the real code per scenario,
 * and the falsification table per defect. Printed by the suites and by `npm run simulate`.
 */
import type { SearchResult } from './search.js';

const hours = (millis: number): string => (millis / 3_600_000).toFixed(1);

/** Virtual time in a readable unit: `850 ms`, `42.0 s`, `3.2 min`, `1.4 h`. */
export function formatVirtual(millis: number): string {
  if (millis < 1000) return `${Math.round(millis)} ms`;
  if (millis < 120_000) return `${(millis / 1000).toFixed(1)} s`;
  if (millis < 7_200_000) return `${(millis / 60_000).toFixed(1)} min`;
  return `${hours(millis)} h`;
}

/** One row per search of the real code: runs, virtual time, violations, and the liveness figures. */
export function livenessTable(rows: readonly SearchResult[]): string {
  const lines = [
    '| scenario | runs | virtual hours | violations | resource held | refused writes / run | grants / run | coordinator crashes / run |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const row of rows) {
    const per = (value: number): string => (row.runs === 0 ? '–' : (value / row.runs).toFixed(2));
    lines.push(
      `| ${row.scenario} | ${row.runs} | ${hours(row.virtualMillis)} | ${row.firstViolation === undefined ? 0 : 1} | ` +
        `${row.runs === 0 ? '–' : ((100 * row.totals.heldFractionSum) / row.runs).toFixed(1)} % | ${per(row.totals.refusedWrites)} | ${per(row.totals.grants)} | ${per(row.totals.coordinatorCrashes)} |`,
    );
  }
  return lines.join('\n');
}

/** One row per defect search: how long it took to find, by which invariant, and the shrunk trace's length. */
export function falsificationTable(rows: readonly SearchResult[]): string {
  const lines = [
    '| defect | scenario | caught by | runs to find | virtual time to find | shrunk trace (lines) |',
    '| --- | --- | --- | ---: | ---: | ---: |',
  ];
  for (const row of rows) {
    const found = row.firstViolation !== undefined;
    lines.push(
      `| ${row.defect ?? 'none'} | ${row.scenario} | ${found ? row.firstViolation!.invariant : '**not caught**'} | ${found ? row.runs : `> ${row.runs}`} | ` +
        `${formatVirtual(row.virtualMillis)} | ${row.shrunk?.trace.length ?? '–'} |`,
    );
  }
  return lines.join('\n');
}

/** Searches of one defect over several seeds; the first one was shrunk. */
export interface DefectSeries {
  readonly defect: string;
  readonly scenario: string;
  readonly results: readonly SearchResult[];
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/**
 * One row per defect searched over several seeds: in how many it was caught, by which
 * invariants, the median and worst runs and virtual time to find it, and the length of the
 * first seed's shrunk trace.
 */
export function falsificationSeriesTable(series: readonly DefectSeries[]): string {
  const lines = [
    '| defect | scenario | caught by | caught in | runs to find (median / max) | virtual time to find (median / max) | shrunk trace (lines) |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: |',
  ];
  for (const { defect, scenario, results } of series) {
    const found = results.filter((result) => result.firstViolation !== undefined);
    const invariants = [...new Set(found.map((result) => result.firstViolation!.invariant))].join(', ');
    const runs = found.map((result) => result.runs);
    const virtual = found.map((result) => result.virtualMillis);
    const shrunk = results[0]?.shrunk?.trace.length;
    lines.push(
      `| ${defect} | ${scenario} | ${invariants === '' ? '**not caught**' : invariants} | ${found.length} / ${results.length} seeds | ` +
        `${found.length === 0 ? '–' : `${median(runs)} / ${Math.max(...runs)}`} | ${found.length === 0 ? '–' : `${formatVirtual(median(virtual))} / ${formatVirtual(Math.max(...virtual))}`} | ${shrunk ?? '–'} |`,
    );
  }
  return lines.join('\n');
}
