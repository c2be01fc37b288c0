import { describe, expect, it } from 'vitest';
import {
  coordinatorCheckpointed,
  coordinatorStarted,
  fenceRejected,
  leaseExpired,
  leaseGranted,
  leaseReleased,
} from '../testing/event-builders.js';
import { acquire, at, foldEvents, given } from '../testing/decider-specification.js';
import type { AcquireLease } from './commands.js';
import { decide } from './decide.js';
import { evolve } from './evolve.js';
import { fromSnapshot, toSnapshot } from './state.js';

const DELAY = 5000;
const started = coordinatorStarted({ atMillis: 0 });
const grantedA = leaseGranted('slot', 'agent-a', 1, { atMillis: 1000, requestId: 'req-a', ttlMillis: 10_000 });
const expiredA = leaseExpired('slot', 'agent-a', 1, { atMillis: 11_000 });
/** An acquire of `slot` under a 5 s lock-delay (ttl 10 s). */
const delayedAcquire = (holderId: string, requestId: string, lockDelayMillis = DELAY): AcquireLease => ({
  ...acquire('slot', holderId, requestId),
  lockDelayMillis,
});

describe('decide: lock-delay', () => {
  it('denies a new grant until the delay after an expiry has passed, with no event and the time left', () => {
    given([started, grantedA, expiredA])
      .at(at(12_000))
      .when(delayedAcquire('agent-b', 'req-b'))
      .then({
        events: [],
        outcome: { ok: false, reason: 'lock-delay', retryAfterMillis: 4000 },
      });
    given([started, grantedA, expiredA])
      .at(at(15_999))
      .when(delayedAcquire('agent-b', 'req-b'))
      .then({
        events: [],
        outcome: { ok: false, reason: 'lock-delay', retryAfterMillis: 1 },
      });
    given([started, grantedA, expiredA])
      .at(at(16_000))
      .when(delayedAcquire('agent-b', 'req-b'))
      .then({
        events: [leaseGranted('slot', 'agent-b', 2, { atMillis: 16_000, requestId: 'req-b' })],
      });
  });

  it('delays the lost holder itself too: its writes may still be in flight', () => {
    given([started, grantedA, expiredA])
      .at(at(12_000))
      .when(delayedAcquire('agent-a', 'req-a2'))
      .then({
        events: [],
        outcome: { ok: false, reason: 'lock-delay', retryAfterMillis: 4000 },
      });
  });

  it('grants at once where no delay applies', () => {
    given([started, grantedA, expiredA])
      .at(at(12_000))
      .when(delayedAcquire('agent-b', 'req-b', 0))
      .then({
        events: [leaseGranted('slot', 'agent-b', 2, { atMillis: 12_000, requestId: 'req-b' })],
      });
    given([started, grantedA, expiredA])
      .at(at(12_000))
      .when(acquire('other', 'agent-b', 'req-b'))
      .then({
        events: [leaseGranted('other', 'agent-b', 2, { atMillis: 12_000, requestId: 'req-b' })],
      });
  });

  it('does not delay after a release: a clean handover', () => {
    given([started, grantedA, leaseReleased('slot', 'agent-a', 1, { atMillis: 2000 })])
      .at(at(2001))
      .when(delayedAcquire('agent-b', 'req-b'))
      .then({
        events: [leaseGranted('slot', 'agent-b', 2, { atMillis: 2001, requestId: 'req-b' })],
      });
  });

  it('records the expiry of a lapsed lease an acquire finds, and starts the delay there instead of granting', () => {
    const decision = given([started, grantedA])
      .at(at(11_500))
      .when(delayedAcquire('agent-b', 'req-b'))
      .then({
        events: [leaseExpired('slot', 'agent-a', 1, { atMillis: 11_500 })],
        outcome: { ok: false, reason: 'lock-delay', retryAfterMillis: DELAY },
      });
    const state = foldEvents([started, grantedA, ...decision.events]);
    expect(decide(delayedAcquire('agent-b', 'req-b'), state, at(16_499)).outcome).toEqual({
      ok: false,
      reason: 'lock-delay',
      retryAfterMillis: 1,
    });
    expect(decide(delayedAcquire('agent-b', 'req-b'), state, at(16_500)).outcome).toMatchObject({
      ok: true,
      grant: { fence: 2 },
    });
  });

  it('delays the next grant after a refused write of a lost holder, even one refused while another holds the resource', () => {
    // agent-a's lease expired, agent-b took it without delay, then a late write of agent-a was refused.
    const history = [
      started,
      grantedA,
      expiredA,
      leaseGranted('slot', 'agent-b', 2, { atMillis: 11_000 }),
      fenceRejected({
        atMillis: 12_000,
        rejected: { holderId: 'agent-a', fence: 1 },
        current: { holderId: 'agent-b', fence: 2 },
      }),
      leaseReleased('slot', 'agent-b', 2, { atMillis: 13_000 }),
    ];
    given(history)
      .at(at(13_000))
      .when(delayedAcquire('agent-c', 'req-c'))
      .then({
        events: [],
        outcome: { ok: false, reason: 'lock-delay', retryAfterMillis: 4000 },
      });
    given(history)
      .at(at(17_000))
      .when(delayedAcquire('agent-c', 'req-c'))
      .then({
        events: [leaseGranted('slot', 'agent-c', 3, { atMillis: 17_000, requestId: 'req-c' })],
      });
  });

  it('answers a retried requestId with the grant it is owed, even after a refusal started a delay', () => {
    const history = [
      started,
      grantedA,
      expiredA,
      leaseGranted('slot', 'agent-b', 2, { atMillis: 16_000, requestId: 'req-b' }),
      fenceRejected({
        atMillis: 16_500,
        rejected: { holderId: 'agent-a', fence: 1 },
        current: { holderId: 'agent-b', fence: 2 },
      }),
    ];
    const { outcome } = given(history).at(at(17_000)).when(delayedAcquire('agent-b', 'req-b')).then({ events: [] });
    expect(outcome).toMatchObject({ ok: true, grant: { fence: 2, holderId: 'agent-b' } });
  });

  it('ends the delay with the grant that follows it', () => {
    const state = foldEvents([started, grantedA, expiredA]);
    expect(state.lostAtMillis.get('slot')).toBe(11_000);
    evolve(state, leaseGranted('slot', 'agent-b', 2, { atMillis: 16_000 }));
    expect(state.lostAtMillis.has('slot')).toBe(false);
  });

  it('refuses a malformed lockDelayMillis, naming it, and changes nothing', () => {
    given([started])
      .at(at(1000))
      .when(delayedAcquire('agent-b', 'req-b', -1))
      .thenThrows(/lockDelayMillis/);
    given([started])
      .at(at(1000))
      .when(delayedAcquire('agent-b', 'req-b', 1.5))
      .thenThrows(/lockDelayMillis/);
  });
});

describe('lock-delay across a restart', () => {
  /** agent-a's lease expired at 11 000 in boot-1, which was last observed alive at 12 000. */
  const beforeCrash = [started, grantedA, expiredA, coordinatorCheckpointed({ atMillis: 12_000 })];
  const restart = coordinatorStarted({ bootId: 'boot-2', atMillis: 50, previousBootId: 'boot-1', recoveredFence: 1 });

  it('resumes with what was left when the dead boot was last seen; the downtime does not count', () => {
    // 1000 ms of the 5000 ms delay were observed before the crash: 4000 ms remain from the new start (50).
    const state = foldEvents([...beforeCrash, restart]);
    expect(state.lostAtMillis.get('slot')).toBe(-950);
    expect(decide(delayedAcquire('agent-b', 'req-b'), state, at(100, { bootId: 'boot-2' })).outcome).toEqual({
      ok: false,
      reason: 'lock-delay',
      retryAfterMillis: 3950,
    });
    expect(decide(delayedAcquire('agent-b', 'req-b'), state, at(4050, { bootId: 'boot-2' })).outcome).toMatchObject({
      ok: true,
      grant: { fence: 2 },
    });
  });

  it('is kept in a snapshot, and a restored state decides the same delay', () => {
    const state = foldEvents([...beforeCrash, restart]);
    const restored = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state))) as ReturnType<typeof toSnapshot>);
    expect(restored).toEqual(state);
    const now = at(100, { bootId: 'boot-2' });
    expect(decide(delayedAcquire('agent-b', 'req-b'), restored!, now)).toEqual(
      decide(delayedAcquire('agent-b', 'req-b'), state, now),
    );
  });

  it('does not restore a snapshot of schema version 1, written before the delays were kept: the log is replayed instead', () => {
    const snapshot = toSnapshot(foldEvents(beforeCrash));
    expect(fromSnapshot({ ...snapshot, schemaVersion: 1 })).toBeUndefined();
  });
});
