import { describe, expect, it } from 'vitest';
import { ClockDomainError } from '../errors.js';
import { Instant } from './instant.js';

describe('Instant', () => {
  describe('of', () => {
    it('keeps the reading and its domain', () => {
      const at = Instant.of(1_250.5, 'agent-a');
      expect(at.millis).toBe(1_250.5);
      expect(at.domain).toBe('agent-a');
    });

    it.each([
      ['NaN', Number.NaN],
      ['Infinity', Number.POSITIVE_INFINITY],
      ['-Infinity', Number.NEGATIVE_INFINITY],
    ])('refuses %s millis with a RangeError naming the field', (_label, millis) => {
      expect(() => Instant.of(millis, 'agent-a')).toThrow(
        /Instant\.of: millis must be a finite number of milliseconds/,
      );
      expect(() => Instant.of(millis, 'agent-a')).toThrow(RangeError);
    });

    it('refuses an empty domain with a TypeError', () => {
      expect(() => Instant.of(0, '')).toThrow(TypeError);
      expect(() => Instant.of(0, '')).toThrow(/domain/);
    });

    it('is immutable', () => {
      const at = Instant.of(5, 'agent-a');
      expect(Object.isFrozen(at)).toBe(true);
    });
  });

  describe('arithmetic within one domain', () => {
    it('adds and subtracts milliseconds', () => {
      const sentAt = Instant.of(1_000, 'agent-a');
      const later = sentAt.plus(250);
      expect(later.millis).toBe(1_250);
      expect(later.domain).toBe('agent-a');
      expect(later.minus(sentAt)).toBe(250);
      expect(sentAt.minus(later)).toBe(-250);
    });

    it('compares readings strictly and inclusively', () => {
      const a = Instant.of(10, 'c');
      const b = Instant.of(20, 'c');
      expect([
        a.isBefore(b),
        a.isAfter(b),
        b.isAfter(a),
        b.isAtOrAfter(a),
        a.isAtOrAfter(a),
        a.equals(Instant.of(10, 'c')),
      ]).toEqual([true, false, true, true, true, true]);
      expect(a.isBefore(a)).toBe(false);
    });

    it('refuses a non-finite duration in plus', () => {
      expect(() => Instant.of(0, 'c').plus(Number.NaN)).toThrow(RangeError);
      expect(() => Instant.of(0, 'c').plus(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    });

    it('round-trips through JSON as { millis, domain }', () => {
      const at = Instant.of(42, 'boot-1');
      const json = JSON.parse(JSON.stringify(at)) as { millis: number; domain: string };
      expect(json).toEqual({ millis: 42, domain: 'boot-1' });
      expect(Instant.of(json.millis, json.domain).equals(at)).toBe(true);
    });
  });

  describe('across domains', () => {
    const agent = Instant.of(1_000, 'agent-a');
    const coordinator = Instant.of(1_000, 'coordinator');

    it.each([
      ['minus', () => agent.minus(coordinator)],
      ['isBefore', () => agent.isBefore(coordinator)],
      ['isAfter', () => agent.isAfter(coordinator)],
      ['isAtOrAfter', () => agent.isAtOrAfter(coordinator)],
      ['equals', () => agent.equals(coordinator)],
    ])('%s throws ClockDomainError naming both domains instead of answering', (operation, act) => {
      let caught: unknown;
      try {
        act();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ClockDomainError);
      const error = caught as ClockDomainError;
      expect(error.code).toBe('clock-domain');
      expect([error.left, error.right]).toEqual(['agent-a', 'coordinator']);
      expect(error.message).toContain(operation);
    });
  });
});
