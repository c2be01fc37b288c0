/**
 * A count with its noun, for the dashboard's words: `1 lane`, `2 lanes`, `12,480 events` (en-US
 * digits, as every count on the page). The nouns the page counts take an `s` in the plural.
 */
export const countOf = (count: number, noun: string): string =>
  `${count.toLocaleString('en-US')} ${noun}${count === 1 ? '' : 's'}`;
