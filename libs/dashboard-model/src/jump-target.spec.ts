import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeLocalZone, formatUtcOffset, jumpOutsideLog, parseJumpTarget, type JumpTarget } from './jump-target.js';
import { fcParameters } from './testing/fc-seed.js';
import { localFieldsIn } from './testing/local-fields.js';

const BERLIN = { nowMillis: Date.parse('2026-12-02T10:00:00Z'), timeZone: 'Europe/Berlin' };
const wallOf = (text: string, context = BERLIN): number => {
  const parsed = parseJumpTarget(text, context);
  if (!parsed.ok || parsed.target.kind !== 'wall')
    throw new Error(`expected a wall time for ${text}: ${JSON.stringify(parsed)}`);
  return parsed.target.wallMillis;
};
const messageOf = (text: string, context = BERLIN): string => {
  const parsed = parseJumpTarget(text, context);
  if (parsed.ok) throw new Error(`expected ${text} to be refused, got ${JSON.stringify(parsed.target)}`);
  return parsed.message;
};

describe('parseJumpTarget', () => {
  it('reads log positions as #n, seq n, position n or a bare number', () => {
    for (const text of ['#1234', 'seq 1234', 'SEQ1234', 'position 1234', ' 1234 '])
      expect(parseJumpTarget(text, BERLIN)).toEqual({ ok: true, target: { kind: 'position', position: 1234 } });
  });

  it('reads a time without a date as today in the given zone, and names the zone and its offset', () => {
    expect(parseJumpTarget('13:24:40', BERLIN)).toEqual({
      ok: true,
      target: {
        kind: 'wall',
        wallMillis: Date.parse('2026-12-02T12:24:40Z'),
        zone: 'local',
        zoneLabel: 'local time, Europe/Berlin (UTC+1)',
      },
    });
    expect(wallOf('13:24')).toBe(Date.parse('2026-12-02T12:24:00Z'));
    expect(wallOf('13:24:40.5')).toBe(Date.parse('2026-12-02T12:24:40.500Z'));
    // Just after local midnight "today" is already the next day in Berlin, not in UTC.
    expect(wallOf('00:15', { ...BERLIN, nowMillis: Date.parse('2026-12-02T23:30:00Z') })).toBe(
      Date.parse('2026-12-02T23:15:00Z'),
    );
  });

  it('reads a date and time without offset as local time, with the offset in force on that date (daylight saving)', () => {
    expect(wallOf('2026-07-01 13:24:40')).toBe(Date.parse('2026-07-01T11:24:40Z'));
    expect(wallOf('2026-12-02T13:24:40')).toBe(Date.parse('2026-12-02T12:24:40Z'));
    const summer = parseJumpTarget('2026-07-01 13:24:40', BERLIN);
    expect(summer.ok && summer.target.kind === 'wall' && summer.target.zoneLabel).toBe(
      'local time, Europe/Berlin (UTC+2)',
    );
    expect(wallOf('2026-03-08 01:59:59', { ...BERLIN, timeZone: 'America/New_York' })).toBe(
      Date.parse('2026-03-08T06:59:59Z'),
    );
    expect(wallOf('2026-03-08 03:00', { ...BERLIN, timeZone: 'America/New_York' })).toBe(
      Date.parse('2026-03-08T07:00:00Z'),
    );
    expect(wallOf('2026-12-02 13:24:40', { ...BERLIN, timeZone: 'Asia/Kolkata' })).toBe(
      Date.parse('2026-12-02T07:54:40Z'),
    );
  });

  it('takes an ISO time with Z or an offset as written, whatever the local zone', () => {
    expect(parseJumpTarget('2026-12-02T13:24:40.120Z', BERLIN)).toEqual({
      ok: true,
      target: {
        kind: 'wall',
        wallMillis: Date.parse('2026-12-02T13:24:40.120Z'),
        zone: 'offset',
        zoneLabel: 'UTC (as written)',
      },
    });
    expect(wallOf('2026-12-02T13:24:40+01:00')).toBe(Date.parse('2026-12-02T12:24:40Z'));
    expect(wallOf('2026-12-02 13:24:40 -0530')).toBe(Date.parse('2026-12-02T18:54:40Z'));
    expect(wallOf('13:24:40Z')).toBe(Date.parse('2026-12-02T13:24:40Z'));
  });

  it('refuses a local time that daylight saving skipped or repeated, naming the offsets to choose from', () => {
    expect(messageOf('2026-03-29 02:30')).toMatch(/2026-03-29 02:30 does not exist in Europe\/Berlin.*skipped/);
    expect(messageOf('2026-10-25 02:30')).toMatch(/happens twice in Europe\/Berlin.*\+02:00 or \+01:00/);
    expect(wallOf('2026-10-25T02:30+01:00')).toBe(Date.parse('2026-10-25T01:30:00Z'));
    expect(messageOf('2026-03-08 02:30', { ...BERLIN, timeZone: 'America/New_York' })).toMatch(/does not exist/);
  });

  it('names the field that is wrong', () => {
    expect(messageOf('25:00')).toMatch(/Hour 25 is not 0–23/);
    expect(messageOf('13:60')).toMatch(/Minute 60/);
    expect(messageOf('13:24:61')).toMatch(/Second 61/);
    expect(messageOf('2026-13-01 10:00')).toMatch(/Month 13 is not 1–12/);
    expect(messageOf('2026-02-30 10:00')).toMatch(/Day 30 is not in 2026-02 \(it has 28 days\)/);
    expect(messageOf('2026-12-02T10:00+15:00')).toMatch(/Offset \+15:00: hours 15/);
    expect(messageOf('2026-12-02')).toMatch(/has a date but no time/);
    expect(messageOf('yesterday')).toMatch(/neither a time nor a log position/);
    expect(messageOf('   ')).toMatch(/Type a time or a log position/);
    expect(messageOf('13:24', { ...BERLIN, timeZone: 'Mars/Olympus' })).toMatch(/time zone "Mars\/Olympus" is unknown/);
  });

  it('round-trips any instant written as local fields in several zones, or says it is ambiguous', () => {
    const zones = [
      'Europe/Berlin',
      'America/New_York',
      'Australia/Lord_Howe',
      'Asia/Kolkata',
      'UTC',
      'America/Santiago',
    ];
    fc.assert(
      fc.property(
        fc.integer({ min: Date.parse('2020-01-01T00:00:00Z'), max: Date.parse('2030-01-01T00:00:00Z') }),
        fc.constantFrom(...zones),
        (millis, timeZone) => {
          const { date, time } = localFieldsIn(millis, timeZone);
          const text = `${date} ${time}`;
          const parsed = parseJumpTarget(text, { nowMillis: millis, timeZone });
          if (parsed.ok) expect(parsed.target).toMatchObject({ kind: 'wall', wallMillis: millis, zone: 'local' });
          else expect(parsed.message).toMatch(/happens twice/);
        },
      ),
      fcParameters(500),
    );
  });
});

describe('jumpOutsideLog', () => {
  const bounds = { firstPosition: 1, lastPosition: 500, firstWallMillis: 1_000_000, lastWallMillis: 2_000_000 };
  const wall = (wallMillis: number): JumpTarget => ({
    kind: 'wall',
    wallMillis,
    zone: 'offset',
    zoneLabel: 'UTC (as written)',
  });
  const describeWall = (millis: number): string => `t${millis}`;

  it('accepts what is inside the log and says which end a target falls off', () => {
    expect(jumpOutsideLog({ kind: 'position', position: 1 }, bounds, describeWall)).toBeUndefined();
    expect(jumpOutsideLog({ kind: 'position', position: 500 }, bounds, describeWall)).toBeUndefined();
    expect(jumpOutsideLog(wall(1_500_000), bounds, describeWall)).toBeUndefined();
    expect(jumpOutsideLog({ kind: 'position', position: 0 }, bounds, describeWall)).toBe(
      'Position 0 is before the first event (#1).',
    );
    expect(jumpOutsideLog({ kind: 'position', position: 501 }, bounds, describeWall)).toBe(
      'Position 501 is after the last event (#500).',
    );
    expect(jumpOutsideLog(wall(999_999), bounds, describeWall)).toBe(
      't999999 (UTC (as written)) is before the first event (#1 at t1000000).',
    );
    expect(jumpOutsideLog(wall(2_000_001), bounds, describeWall)).toMatch(
      /is after the last event \(#500 at t2000000\)/,
    );
    expect(jumpOutsideLog(wall(1), { ...bounds, lastPosition: 0 }, describeWall)).toMatch(/log is empty/);
  });
});

describe('formatUtcOffset and describeLocalZone', () => {
  it('writes offsets the short way, with minutes only when there are some', () => {
    expect([0, 60, -180, 330, 765].map(formatUtcOffset)).toEqual(['UTC', 'UTC+1', 'UTC-3', 'UTC+5:30', 'UTC+12:45']);
    expect(describeLocalZone('America/New_York', Date.parse('2026-07-01T00:00:00Z'))).toBe(
      'local time, America/New_York (UTC-4)',
    );
  });
});
