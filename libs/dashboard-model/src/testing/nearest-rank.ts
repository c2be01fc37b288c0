/**
 * A reference for checking quantiles, written from the definition rather than from
 * `quantileOfSorted` (`../rates.ts`): the nearest-rank `percent`th percentile is the smallest value
 * with at least `percent` % of the values at or below it. It counts, in integers, instead of
 * indexing, so it shares no arithmetic with the code it checks. O(n²): for tests.
 *
 * @param values - The measured values, in any order.
 * @param percent - A whole percentile, 0 to 100 (50: the median).
 * @returns The value, or undefined when `values` is empty.
 */
export function nearestRankPercentile(values: readonly number[], percent: number): number | undefined {
  const atOrBelow = (v: number): number => values.filter((x) => x <= v).length;
  return [...values].sort((a, b) => a - b).find((v) => atOrBelow(v) * 100 >= percent * values.length);
}
