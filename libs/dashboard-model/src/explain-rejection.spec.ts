import { describe, expect, it } from 'vitest';
import { isLateReport, LATE_REPORT_NOTE_MILLIS } from './explain-rejection.js';

describe('isLateReport', () => {
  const gate = Date.UTC(2026, 11, 3, 16, 0, 0);

  it('is late only when the record trails the gate reading by more than LATE_REPORT_NOTE_MILLIS', () => {
    expect(isLateReport(gate + LATE_REPORT_NOTE_MILLIS, gate)).toBe(false);
    expect(isLateReport(gate + LATE_REPORT_NOTE_MILLIS + 1, gate)).toBe(true);
    expect(isLateReport(gate + 120_000, gate)).toBe(true);
  });

  it('is never late without a gate reading, nor when the gate clock runs ahead', () => {
    expect(isLateReport(gate + 120_000, undefined)).toBe(false);
    expect(isLateReport(gate, gate + 60_000)).toBe(false);
  });
});
