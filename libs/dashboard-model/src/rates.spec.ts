import { describe, expect, it } from 'vitest';
import { LogBuilder } from './testing/log-builder.js';
import { holdDurations, logRates, quantileOfSorted } from './rates.js';
import { ViewHistory } from './view-history.js';

function historyOf(log: LogBuilder): ViewHistory {
  const history = new ViewHistory();
  log.events.forEach((e) => history.append(e));
  return history;
}

describe('logRates', () => {
  it('counts each kind of event per second in whole-second bins, as of a position', () => {
    // Arrange: wall starts on a second boundary
    const log = new LogBuilder({ wallMillis: 1_780_000_000_000 });
    log.granted('a', 'h1', 1);
    log.advance(200).renewed('a', 'h1', 1);
    log.advance(300).renewed('a', 'h1', 1);
    log.advance(600).rejected('a', { holderId: 'h0', fence: 1 }, { holderId: 'h1', fence: 1 });
    const late = log.advance(100).released('a', 'h1', 1);
    const history = historyOf(log);

    // Act
    const all = logRates(history.index, {
      asOfPosition: late.position,
      fromWallMillis: 1_780_000_000_000,
      toWallMillis: 1_780_000_002_000,
      maxBins: 10,
    });
    const before = logRates(history.index, {
      asOfPosition: late.position - 1,
      fromWallMillis: 1_780_000_000_000,
      toWallMillis: 1_780_000_002_000,
      maxBins: 10,
    });

    // Assert
    expect(all.widthMillis).toBe(1_000);
    expect(all.bins.map((b) => [b.grants, b.renewals, b.rejections, b.releases])).toEqual([
      [1, 2, 0, 0],
      [0, 0, 1, 1],
    ]);
    expect(before.bins[1]?.releases).toBe(0);
  });

  it('widens bins to keep at most maxBins, and reports rates per second', () => {
    // Arrange
    const log = new LogBuilder({ wallMillis: 1_780_000_000_000 });
    for (let i = 0; i < 10; i += 1) log.advance(1_000).granted(`r${i}`, 'h', i + 1);
    const history = historyOf(log);

    // Act
    const { bins, widthMillis } = logRates(history.index, {
      asOfPosition: 100,
      fromWallMillis: 1_780_000_000_000,
      toWallMillis: 1_780_000_012_000,
      maxBins: 3,
    });

    // Assert
    expect(widthMillis).toBe(4_000);
    expect(bins.map((b) => b.grants)).toEqual([0.75, 1, 0.75]);
  });

  it('throws a RangeError for an empty window, naming the unit', () => {
    expect(() => logRates(new ViewHistory().index, { asOfPosition: 0, fromWallMillis: 5, toWallMillis: 5 })).toThrow(
      /toWallMillis must be above fromWallMillis \(milliseconds\)/,
    );
  });
});

describe('holdDurations', () => {
  it('bins ended generations by how long they were held and gives median and p95', () => {
    // Arrange
    const log = new LogBuilder();
    log.granted('a', 'h', 1);
    log.advance(50).released('a', 'h', 1);
    log.granted('b', 'h', 2);
    log.advance(5_000).released('b', 'h', 2);
    log.granted('c', 'h', 3);

    // Act
    const result = holdDurations(historyOf(log).head);

    // Assert
    expect(result.count).toBe(2);
    expect(result.bins.map((b) => b.count)).toEqual([1, 0, 1, 0, 0, 0]);
    expect([result.p50Millis, result.p95Millis]).toEqual([50, 5_000]); // nearest rank of two: the median is the smaller
  });

  it('orders durations numerically, not as text, for the median and p95', () => {
    // Arrange: 20 holds of 100, 200, …, 2 000 ms on separate lanes, granted in descending order
    const log = new LogBuilder();
    for (let i = 20; i >= 1; i -= 1) {
      log.granted(`r${i}`, 'h', 21 - i);
      log.advance(i * 100).released(`r${i}`, 'h', 21 - i);
    }

    // Act
    const result = holdDurations(historyOf(log).head);

    // Assert
    expect(result.count).toBe(20);
    expect([result.p50Millis, result.p95Millis]).toEqual([1_000, 1_900]);
  });
});

describe('quantileOfSorted', () => {
  it('is the nearest rank: the smallest value with at least q × n values at or below it', () => {
    expect(quantileOfSorted([], 0.5)).toBeUndefined();
    expect(quantileOfSorted([7], 0.99)).toBe(7);
    // Two values: the median is the smaller (rank ceil(1) = 1), not the larger
    expect(quantileOfSorted([267, 528], 0.5)).toBe(267);
    // 100 values 1..100: p99 is the 99th, not the maximum; p50 the 50th
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([quantileOfSorted(hundred, 0.5), quantileOfSorted(hundred, 0.99), quantileOfSorted(hundred, 1)]).toEqual([
      50, 99, 100,
    ]);
    // A whole rank that binary floating point puts a hair above itself (0.07 × 100)
    expect(quantileOfSorted(hundred, 0.07)).toBe(7);
    expect(quantileOfSorted(hundred, 0)).toBe(1);
  });
});
