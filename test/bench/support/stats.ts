/**
 * Small statistics and table helpers for the benchmark scripts: percentiles of samples in
 * milliseconds, medians, and Markdown tables (so a run's output can be pasted into BENCHMARKS.md).
 */

/** The `p`-quantile (0 < p ≤ 1) of `samples` by the nearest-rank method, or `NaN` when empty. */
export function quantile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = Float64Array.from(samples).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

/** The median of `values`, ignoring `null`/`undefined`/non-finite ones; `NaN` when none is left. */
export function median(values: readonly (number | null | undefined)[]): number {
  const finite = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const middle = Math.floor(finite.length / 2);
  return finite.length % 2 === 1 ? finite[middle]! : (finite[middle - 1]! + finite[middle]!) / 2;
}

/** `value` with `digits` decimals, or `-` when it is not a finite number. */
export function fixed(value: number | null | undefined, digits = 1): string {
  return typeof value === 'number' && Number.isFinite(value) ? value.toFixed(digits) : '-';
}

/** A Markdown table: a header row, then one row per entry; cells after the first are right-aligned. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length), 3));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  const rule = `| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Milliseconds elapsed since `startedAt` (a `performance.now()` reading). */
export function millisSince(startedAt: number): number {
  return performance.now() - startedAt;
}
