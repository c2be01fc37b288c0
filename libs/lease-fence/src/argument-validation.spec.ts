import { describe, expect, it } from 'vitest';
import { LeaseClient } from './lease/lease-client.js';
import { LeaseCoordinator } from './lease/lease-coordinator.js';
import { createManualClock } from './time/manual-clock.js';
import { MAX_TTL_MILLIS } from './validate.js';

type ErrorClass = typeof TypeError | typeof RangeError;

/** A coordinator that already issued fence 1, on a clock that steps on every read (so a read is visible). */
const world = (): { coordinator: LeaseCoordinator; clockReading: () => number } => {
  const clock = createManualClock('coordinator', { stepPerRead: 1 });
  const coordinator = new LeaseCoordinator({ clock, ttlMillis: 1_000 });
  coordinator.acquire({ resource: 'taken', holderId: 'agent-z', requestId: 'seed' });
  return { coordinator, clockReading: () => clock.peek().millis };
};

const expectRefused = (act: () => unknown, errorClass: ErrorClass, needles: readonly string[]): void => {
  let caught: unknown;
  try {
    act();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(errorClass);
  for (const needle of needles) expect((caught as Error).message).toContain(needle);
};

describe('argument validation', () => {
  describe('LeaseCoordinator constructor', () => {
    const clock = createManualClock('coordinator');
    it.each<[string, Record<string, unknown>, ErrorClass, string[]]>([
      ['ttl 0', { ttlMillis: 0 }, RangeError, ['LeaseCoordinator: ttlMillis', 'milliseconds', 'got 0']],
      ['a negative ttl', { ttlMillis: -5 }, RangeError, ['ttlMillis', 'got -5']],
      ['a NaN ttl', { ttlMillis: Number.NaN }, RangeError, ['ttlMillis', 'got NaN']],
      ['an infinite ttl', { ttlMillis: Number.POSITIVE_INFINITY }, RangeError, ['ttlMillis', 'got Infinity']],
      ['a fractional ttl', { ttlMillis: 1.5 }, RangeError, ['ttlMillis', 'got 1.5']],
      ['a ttl above 2^31 - 1', { ttlMillis: 2 ** 31 }, RangeError, ['ttlMillis', `at most ${MAX_TTL_MILLIS}`]],
      [
        'a ttl above maxTtlMillis',
        { ttlMillis: 2_000, maxTtlMillis: 1_000 },
        RangeError,
        ['ttlMillis', 'at most 1000', 'got 2000'],
      ],
      ['a maxTtlMillis above 2^31 - 1', { ttlMillis: 1, maxTtlMillis: 2 ** 32 }, RangeError, ['maxTtlMillis']],
      ['a string ttl', { ttlMillis: '1000' }, TypeError, ['ttlMillis', 'got "1000"']],
      ['a fractional startFence', { ttlMillis: 1, startFence: 0.5 }, RangeError, ['startFence', 'got 0.5']],
      ['a negative replayCacheSize', { ttlMillis: 1, replayCacheSize: -1 }, RangeError, ['replayCacheSize']],
      ['a missing clock', { ttlMillis: 1, clock: undefined }, TypeError, ['clock']],
    ])('refuses %s, never defaulting it', (_label, options, errorClass, needles) => {
      expectRefused(() => new LeaseCoordinator({ clock, ...options } as never), errorClass, needles);
    });
  });

  describe('LeaseCoordinator calls', () => {
    it.each<[string, (c: LeaseCoordinator) => unknown, ErrorClass, string[]]>([
      [
        'an empty resource',
        (c) => c.acquire({ resource: '', holderId: 'a', requestId: 'r' }),
        TypeError,
        ['LeaseCoordinator.acquire: request.resource', 'got ""'],
      ],
      [
        'an empty holder',
        (c) => c.acquire({ resource: 's', holderId: '', requestId: 'r' }),
        TypeError,
        ['request.holderId'],
      ],
      [
        'an empty requestId',
        (c) => c.acquire({ resource: 's', holderId: 'a', requestId: '' }),
        TypeError,
        ['request.requestId'],
      ],
      [
        'a resource with a trailing space (the id rule the service keeps)',
        (c) => c.acquire({ resource: 'slot ', holderId: 'a', requestId: 'r' }),
        RangeError,
        ['LeaseCoordinator.acquire: request.resource', 'printable ASCII', 'got "slot "'],
      ],
      [
        'a holder id of 201 characters',
        (c) => c.acquire({ resource: 's', holderId: 'h'.repeat(201), requestId: 'r' }),
        RangeError,
        ['request.holderId', 'at most 200 characters'],
      ],
      [
        'a requestId outside printable ASCII',
        (c) => c.acquire({ resource: 's', holderId: 'a', requestId: 'r\u00e9' }),
        RangeError,
        ['request.requestId', 'printable ASCII'],
      ],
      [
        'a zero ttl',
        (c) => c.acquire({ resource: 's', holderId: 'a', requestId: 'r', ttlMillis: 0 }),
        RangeError,
        ['request.ttlMillis', 'got 0'],
      ],
      [
        'a NaN ttl',
        (c) => c.acquire({ resource: 's', holderId: 'a', requestId: 'r', ttlMillis: Number.NaN }),
        RangeError,
        ['request.ttlMillis', 'NaN'],
      ],
      [
        'a ttl above the bound',
        (c) => c.acquire({ resource: 's', holderId: 'a', requestId: 'r', ttlMillis: 2 ** 31 }),
        RangeError,
        ['request.ttlMillis'],
      ],
      [
        'a fractional fence',
        (c) => c.renew({ resource: 'taken', holderId: 'agent-z', requestId: 'n', fence: 1.5 }),
        RangeError,
        ['LeaseCoordinator.renew: request.fence', 'got 1.5'],
      ],
      [
        'a zero fence',
        (c) => c.renew({ resource: 'taken', holderId: 'agent-z', requestId: 'n', fence: 0 }),
        RangeError,
        ['request.fence'],
      ],
      [
        'a renewal ttl of Infinity',
        (c) =>
          c.renew({
            resource: 'taken',
            holderId: 'agent-z',
            requestId: 'n',
            fence: 1,
            ttlMillis: Number.POSITIVE_INFINITY,
          }),
        RangeError,
        ['request.ttlMillis'],
      ],
      [
        'a release with a NaN fence',
        (c) => c.release({ resource: 'taken', holderId: 'agent-z', fence: Number.NaN }),
        RangeError,
        ['LeaseCoordinator.release: token.fence'],
      ],
      ['a missing request', (c) => c.acquire(undefined as never), TypeError, ['request']],
    ])(
      'refuses %s before reading the clock, burning no fence and changing nothing',
      (_label, act, errorClass, needles) => {
        const { coordinator, clockReading } = world();
        const before = {
          reading: clockReading(),
          fence: coordinator.issuedFence,
          leases: JSON.stringify(coordinator.leases()),
        };
        expectRefused(() => act(coordinator), errorClass, needles);
        expect({
          reading: clockReading(),
          fence: coordinator.issuedFence,
          leases: JSON.stringify(coordinator.leases()),
        }).toEqual(before);
      },
    );
  });

  describe('LeaseClient', () => {
    const clock = createManualClock('agent-a');
    it.each<[string, Record<string, unknown>, ErrorClass, string[]]>([
      ['an empty holderId', { holderId: '' }, TypeError, ['LeaseClient: holderId']],
      ['a negative skew', { clockSkewMillis: -1 }, RangeError, ['clockSkewMillis', 'got -1']],
      ['a NaN skew', { clockSkewMillis: Number.NaN }, RangeError, ['clockSkewMillis', 'got NaN']],
      ['a skew as large as the largest ttl', { clockSkewMillis: MAX_TTL_MILLIS }, RangeError, ['clockSkewMillis']],
      ['a non-function newRequestId', { newRequestId: 'r' }, TypeError, ['newRequestId']],
    ])('refuses %s', (_label, options, errorClass, needles) => {
      expectRefused(
        () => new LeaseClient({ clock, holderId: 'agent-a', clockSkewMillis: 10, ...options } as never),
        errorClass,
        needles,
      );
    });

    it.each<[string, (c: LeaseClient) => unknown, ErrorClass, string[]]>([
      ['an empty resource', (c) => c.beginAcquire(''), TypeError, ['LeaseClient.beginAcquire: resource']],
      [
        'a ttl not above the skew',
        (c) => c.beginAcquire('s', { ttlMillis: 100 }),
        RangeError,
        ['options.ttlMillis', 'clockSkewMillis'],
      ],
      [
        'a fractional ttl',
        (c) => c.beginAcquire('s', { ttlMillis: 150.5 }),
        RangeError,
        ['options.ttlMillis', 'got 150.5'],
      ],
    ])('refuses a begin call with %s without reading the clock', (_label, act, errorClass, needles) => {
      const stepping = createManualClock('agent-a', { stepPerRead: 1 });
      const client = new LeaseClient({ clock: stepping, holderId: 'agent-a', clockSkewMillis: 100 });
      expectRefused(() => act(client), errorClass, needles);
      expect(stepping.peek().millis).toBe(0);
    });

    it('refuses a newRequestId that returns an empty id', () => {
      const client = new LeaseClient({ clock, holderId: 'agent-a', clockSkewMillis: 0, newRequestId: () => '' });
      expectRefused(() => client.beginAcquire('s'), TypeError, ['newRequestId()']);
    });
  });
});
