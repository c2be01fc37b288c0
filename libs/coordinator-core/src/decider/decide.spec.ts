import { ClockDomainError, Instant, ProtocolMisuseError } from 'lease-fence';
import { describe, expect, it } from 'vitest';
import {
  coordinatorCheckpointed,
  coordinatorStarted,
  fenceAdmitted,
  fenceFloorReported,
  fenceRejected,
  fenceReserved,
  rejectionsMissing,
  leaseExpired,
  leaseGranted,
  leaseReleased,
  leaseRenewed,
  snapshotTaken,
} from '../testing/event-builders.js';
import { acquire, at, given, release, renew } from '../testing/decider-specification.js';
import type { RecordFenceRejection } from './commands.js';
import { REJECTION_KEYS_KEPT } from './state.js';

const started = coordinatorStarted({ atMillis: 0 });
const grantedA = leaseGranted('slot', 'agent-a', 1, { atMillis: 1000, requestId: 'req-a', ttlMillis: 10_000 });
const grantOf = (fence: number, holderId: string, requestId: string, expiresAtMillis: number, ttlMillis = 10_000) => ({
  resource: 'slot',
  holderId,
  fence,
  ttlMillis,
  requestId,
  coordinatorExpiresAt: Instant.of(expiresAtMillis, 'boot-1'),
});

describe('decide', () => {
  describe('AcquireLease', () => {
    it('grants a free resource with the next fence, expiring ttl after now', () => {
      given([started])
        .at(at(1000, { wallMillis: 1_700_000_000_000 }))
        .when(acquire('slot', 'agent-a', 'req-a'))
        .then({
          events: [
            leaseGranted('slot', 'agent-a', 1, { atMillis: 1000, wallMillis: 1_700_000_000_000, requestId: 'req-a' }),
          ],
          outcome: { ok: true, grant: grantOf(1, 'agent-a', 'req-a', 11_000) },
        });
    });

    it('denies another holder while the lease is live, with no event and the time left as retryAfterMillis', () => {
      given([started, grantedA])
        .at(at(4000))
        .when(acquire('slot', 'agent-b', 'req-b'))
        .then({
          events: [],
          outcome: { ok: false, reason: 'held', heldBy: 'agent-a', retryAfterMillis: 7000 },
        });
    });

    it('never gives the holder a second fence for a resource it holds', () => {
      given([started, grantedA])
        .at(at(4000))
        .when(acquire('slot', 'agent-a', 'req-a2'))
        .then({
          events: [],
          outcome: { ok: false, reason: 'already-held', heldBy: 'agent-a', fence: 1, retryAfterMillis: 7000 },
        });
    });

    it('answers a retried requestId with the grant it already has, without an event', () => {
      given([started, grantedA])
        .at(at(5000))
        .when(acquire('slot', 'agent-a', 'req-a'))
        .then({
          events: [],
          outcome: { ok: true, grant: grantOf(1, 'agent-a', 'req-a', 11_000) },
        });
    });

    it('records the expiry of a lapsed lease and grants a strictly higher fence', () => {
      given([started, grantedA])
        .at(at(11_000))
        .when(acquire('slot', 'agent-b', 'req-b'))
        .then({
          events: [
            leaseExpired('slot', 'agent-a', 1, { atMillis: 11_000 }),
            leaseGranted('slot', 'agent-b', 2, { atMillis: 11_000, requestId: 'req-b' }),
          ],
        });
    });

    it('continues above a fence burned at the last start', () => {
      given([coordinatorStarted({ recoveredFence: 41 })])
        .at(at(1))
        .when(acquire('slot', 'agent-a', 'req-a'))
        .then({
          events: [leaseGranted('slot', 'agent-a', 42, { atMillis: 1, requestId: 'req-a' })],
        });
    });
  });

  describe('RenewLease', () => {
    it("extends the holder's lease with the same fence", () => {
      given([started, grantedA])
        .at(at(8000))
        .when(renew('slot', 'agent-a', 1, 'renew-1', 5000))
        .then({
          events: [leaseRenewed('slot', 'agent-a', 1, { atMillis: 8000, requestId: 'renew-1', ttlMillis: 5000 })],
          outcome: { ok: true, grant: grantOf(1, 'agent-a', 'renew-1', 13_000, 5000) },
        });
    });

    it('never resurrects a lease past its expiry, even when nobody took the resource', () => {
      given([started, grantedA])
        .at(at(11_000))
        .when(renew('slot', 'agent-a', 1))
        .then({ events: [], outcome: { ok: false, reason: 'expired' } });
    });

    it('refuses a holder that does not hold that fence', () => {
      given([started, grantedA])
        .at(at(2000))
        .when(renew('slot', 'agent-b', 1))
        .then({ events: [], outcome: { ok: false, reason: 'not-holder' } });
    });

    it('answers not-holder on a resource that never had a lease, even with a fence issued for another one', () => {
      given([started, grantedA])
        .at(at(2000))
        .when(renew('never-leased', 'agent-a', 1))
        .then({ events: [], outcome: { ok: false, reason: 'not-holder' } });
    });

    it('answers expired for a lease that expired and was swept', () => {
      given([started, grantedA, leaseExpired('slot', 'agent-a', 1, { atMillis: 11_000 })])
        .at(at(12_000))
        .when(renew('slot', 'agent-a', 1))
        .then({
          events: [],
          outcome: { ok: false, reason: 'expired' },
        });
    });
  });

  describe('ReleaseLease', () => {
    it("records the release of the holder's live lease", () => {
      given([started, grantedA])
        .at(at(3000))
        .when(release('slot', 'agent-a', 1))
        .then({
          events: [leaseReleased('slot', 'agent-a', 1, { atMillis: 3000 })],
          outcome: { ok: true },
        });
    });

    it('answers ok, with no second LeaseReleased, to a retried release of a generation that holder released', () => {
      given([started, grantedA, leaseReleased('slot', 'agent-a', 1, { atMillis: 2000 })])
        .at(at(3000))
        .when(release('slot', 'agent-a', 1))
        .then({
          events: [],
          outcome: { ok: true },
        });
    });

    it('answers expired, as renew does, for a generation another holder released', () => {
      given([started, grantedA, leaseReleased('slot', 'agent-a', 1, { atMillis: 2000 })])
        .at(at(3000))
        .when(release('slot', 'agent-b', 1))
        .then({
          events: [],
          outcome: { ok: false, reason: 'expired' },
        });
    });

    it('answers expired, as renew does, for a lease that expired and was swept', () => {
      given([started, grantedA, leaseExpired('slot', 'agent-a', 1, { atMillis: 11_000 })])
        .at(at(12_000))
        .when(release('slot', 'agent-a', 1))
        .then({
          events: [],
          outcome: { ok: false, reason: 'expired' },
        });
    });

    it('answers not-holder for a fence never issued for this resource', () => {
      given([started, grantedA, leaseGranted('other', 'agent-a', 2, { atMillis: 1500 })])
        .at(at(3000))
        .when(release('slot', 'agent-a', 2))
        .then({
          events: [],
          outcome: { ok: false, reason: 'not-holder' },
        });
    });
  });

  describe('ExpireDueLeases', () => {
    it('records one expiry per lease at or past its expiry and leaves the others', () => {
      given([started, grantedA, leaseGranted('other', 'agent-b', 2, { atMillis: 5000 })])
        .at(at(11_000))
        .when({ type: 'ExpireDueLeases' })
        .then({
          events: [leaseExpired('slot', 'agent-a', 1, { atMillis: 11_000 })],
          outcome: { ok: true, expired: 1 },
        });
    });
  });

  describe('RecordFenceRejection', () => {
    // 'slot' had fence 1 (agent-a, released), then fence 2 (agent-b, current); fence 3 went to 'other'.
    const history = [
      started,
      grantedA,
      leaseReleased('slot', 'agent-a', 1, { atMillis: 1100 }),
      leaseGranted('slot', 'agent-b', 2, { atMillis: 1200 }),
      leaseGranted('other', 'agent-c', 3, { atMillis: 1300 }),
    ];
    const report: RecordFenceRejection = {
      type: 'RecordFenceRejection',
      gateId: 'gate-1',
      resource: 'slot',
      seq: 1,
      kind: 'stale',
      rejected: { holderId: 'agent-a', fence: 1 },
      current: { holderId: 'agent-b', fence: 2 },
      gateWallMillis: 1_700_000_000_000,
    };

    it("records a gate's rejection with both holders and fences", () => {
      given(history)
        .at(at(1500))
        .when(report)
        .then({
          events: [fenceRejected({ atMillis: 1500, seq: 1, gateWallMillis: 1_700_000_000_000 })],
          outcome: { ok: true, duplicate: false },
        });
    });

    it('records a stale rejection with the same holder on both sides: its own old write under its previous fence', () => {
      const sameHolder = { ...report, rejected: { holderId: 'agent-b', fence: 1 } };
      given(history)
        .at(at(1500))
        .when(sameHolder)
        .then({
          events: [
            fenceRejected({
              atMillis: 1500,
              seq: 1,
              gateWallMillis: 1_700_000_000_000,
              rejected: { holderId: 'agent-b', fence: 1 },
            }),
          ],
          outcome: { ok: true, duplicate: false },
        });
    });

    it('records a double grant: two different holders with the same issued fence', () => {
      const doubleGrant: RecordFenceRejection = {
        ...report,
        kind: 'double-grant',
        rejected: { holderId: 'agent-x', fence: 2 },
      };
      given(history)
        .at(at(1500))
        .when(doubleGrant)
        .then({
          events: [
            fenceRejected({
              atMillis: 1500,
              seq: 1,
              kind: 'double-grant',
              gateWallMillis: 1_700_000_000_000,
              rejected: { holderId: 'agent-x', fence: 2 },
            }),
          ],
          outcome: { ok: true, duplicate: false },
        });
    });

    it('answers a repeated report (same gate, resource and seq) as a duplicate with no event', () => {
      given([...history, fenceRejected({ atMillis: 1400, seq: 1 })])
        .at(at(1500))
        .when(report)
        .then({ events: [], outcome: { ok: true, duplicate: true } });
    });

    it("answers a repeat that differs only in the gate's wall time as a duplicate: wall time is display only", () => {
      given([...history, fenceRejected({ atMillis: 1400, seq: 1, gateWallMillis: 1 })])
        .at(at(1500))
        .when(report)
        .then({ events: [], outcome: { ok: true, duplicate: true } });
    });

    it.each([
      ['another kind', { kind: 'double-grant', rejected: { holderId: 'agent-x', fence: 2 } }],
      ['another rejected holder', { rejected: { holderId: 'agent-x', fence: 1 } }],
      ['another current fence', { current: { holderId: 'agent-b', fence: 3 } }],
    ] as const)(
      'refuses a recorded (gate, resource, seq) sent again with %s as a seq-conflict, with no event',
      (_what, change) => {
        given([...history, fenceRejected({ atMillis: 1400, seq: 1 })])
          .at(at(1500))
          .when({ ...report, ...change } as RecordFenceRejection)
          .then({
            events: [],
            outcome: {
              ok: false,
              reason: 'seq-conflict',
              message: expect.stringMatching(
                /^seq 1 of gate "gate-1" on resource "slot" was already recorded as stale, rejected "agent-a" fence 1, current "agent-b" fence 2, not /,
              ) as string,
            },
          });
      },
    );

    it.each([
      [
        'a stale fence above the floor',
        { rejected: { holderId: 'agent-a', fence: 9 }, current: { holderId: 'agent-b', fence: 2 } },
        'rejected.fence',
      ],
      ['a stale fence equal to the floor', { rejected: { holderId: 'agent-a', fence: 2 } }, 'rejected.fence'],
      ['a double grant with two different fences', { kind: 'double-grant' }, 'rejected.fence'],
      [
        'a double grant with the same holder twice',
        { kind: 'double-grant', rejected: { holderId: 'agent-b', fence: 2 } },
        'rejected.holderId',
      ],
      ['a floor fence never issued', { current: { holderId: 'agent-b', fence: 900_000_000 } }, 'current.fence'],
      [
        'two fences never issued',
        { rejected: { holderId: 'agent-a', fence: 900_000_000 }, current: { holderId: 'agent-b', fence: 900_000_001 } },
        'rejected.fence',
      ],
      [
        'a double grant of a fence never issued',
        {
          kind: 'double-grant',
          rejected: { holderId: 'agent-a', fence: 900_000_000 },
          current: { holderId: 'agent-b', fence: 900_000_000 },
        },
        'rejected.fence',
      ],
      ['a fence issued only for another resource', { current: { holderId: 'agent-c', fence: 3 } }, 'current.fence'],
      ['a wall time of 1e300 ms', { gateWallMillis: 1e300 }, 'gateWallMillis'],
      ['a wall time after the year 3000', { gateWallMillis: Date.UTC(3000, 0, 1) + 1 }, 'gateWallMillis'],
    ] as const)('refuses %s as implausible, naming the field, with no event', (_what, change, field) => {
      given(history)
        .at(at(1500))
        .when({ ...report, ...change } as RecordFenceRejection)
        .then({
          events: [],
          outcome: { ok: false, reason: 'implausible', field, message: expect.stringContaining(field) as string },
        });
    });

    it('refuses any fence on a resource that never had a lease as implausible', () => {
      given(history)
        .at(at(1500))
        .when({ ...report, resource: 'never-leased' })
        .then({
          events: [],
          outcome: {
            ok: false,
            reason: 'implausible',
            field: 'rejected.fence',
            message:
              'rejected.fence 1 was never issued for resource "never-leased" (the highest fence granted on it is 0)',
          },
        });
    });

    describe("a gap in a gate's seqs", () => {
      const reportSeq = (seq: number, change: Partial<RecordFenceRejection> = {}): RecordFenceRejection => ({
        ...report,
        seq,
        ...change,
      });

      it('records the seqs between the last recorded one and the report as missing, just before the report', () => {
        given([...history, fenceRejected({ atMillis: 1300, seq: 1 }), fenceRejected({ atMillis: 1400, seq: 2 })])
          .at(at(1500))
          .when(reportSeq(5))
          .then({
            events: [
              rejectionsMissing(3, 4, { atMillis: 1500 }),
              fenceRejected({ atMillis: 1500, seq: 5, gateWallMillis: 1_700_000_000_000 }),
            ],
            outcome: { ok: true, duplicate: false },
          });
      });

      it("records seqs from 1 as missing when a gate's first report for a resource is above 1", () => {
        given(history)
          .at(at(1500))
          .when(reportSeq(3))
          .then({
            events: [
              rejectionsMissing(1, 2, { atMillis: 1500 }),
              fenceRejected({ atMillis: 1500, seq: 3, gateWallMillis: 1_700_000_000_000 }),
            ],
            outcome: { ok: true, duplicate: false },
          });
      });

      it('expects the seq after a gap already recorded, not the missing ones again', () => {
        given([...history, rejectionsMissing(1, 2, { atMillis: 1400 }), fenceRejected({ atMillis: 1400, seq: 3 })])
          .at(at(1500))
          .when(reportSeq(4))
          .then({
            events: [fenceRejected({ atMillis: 1500, seq: 4, gateWallMillis: 1_700_000_000_000 })],
            outcome: { ok: true, duplicate: false },
          });
      });

      it('records a late report of a missing seq as a rejection, without another gap', () => {
        given([...history, rejectionsMissing(1, 2, { atMillis: 1400 }), fenceRejected({ atMillis: 1400, seq: 3 })])
          .at(at(1500))
          .when(reportSeq(2))
          .then({
            events: [fenceRejected({ atMillis: 1500, seq: 2, gateWallMillis: 1_700_000_000_000 })],
            outcome: { ok: true, duplicate: false },
          });
      });

      it('counts seqs per gate and per resource', () => {
        const otherGate = fenceRejected({ atMillis: 1400, seq: 1, gateId: 'gate-2' });
        const otherResource = fenceRejected({
          atMillis: 1400,
          seq: 1,
          resource: 'other',
          rejected: { holderId: 'agent-a', fence: 1 },
          current: { holderId: 'agent-c', fence: 3 },
        });
        given([...history, otherGate, otherResource])
          .at(at(1500))
          .when(reportSeq(2))
          .then({
            events: [
              rejectionsMissing(1, 1, { atMillis: 1500 }),
              fenceRejected({ atMillis: 1500, seq: 2, gateWallMillis: 1_700_000_000_000 }),
            ],
            outcome: { ok: true, duplicate: false },
          });
      });

      it(`answers a resend of a seq recorded before the last ${REJECTION_KEYS_KEPT} reports (its content no longer kept) as a duplicate, with no event`, () => {
        // gate-1's seq 1 is recorded (its reply lost), then other gates' reports push its key out of the kept ones
        const others = Array.from({ length: REJECTION_KEYS_KEPT }, (_, index) =>
          fenceRejected({ atMillis: 1400, seq: index + 1, gateId: 'gate-2' }),
        );
        given([...history, fenceRejected({ atMillis: 1300, seq: 1 }), ...others])
          .at(at(1500))
          .when(reportSeq(1))
          .then({ events: [], outcome: { ok: true, duplicate: true } });
      });

      it('records a late report of a missing seq once, also after its key was pushed out of the kept ones', () => {
        const others = Array.from({ length: REJECTION_KEYS_KEPT }, (_, index) =>
          fenceRejected({ atMillis: 1400, seq: index + 1, gateId: 'gate-2' }),
        );
        const gap = [rejectionsMissing(1, 2, { atMillis: 1300 }), fenceRejected({ atMillis: 1300, seq: 3 })];
        given([...history, ...gap, ...others])
          .at(at(1500))
          .when(reportSeq(2))
          .then({
            events: [fenceRejected({ atMillis: 1500, seq: 2, gateWallMillis: 1_700_000_000_000 })],
            outcome: { ok: true, duplicate: false },
          });
        given([...history, ...gap, fenceRejected({ atMillis: 1350, seq: 2 }), ...others])
          .at(at(1500))
          .when(reportSeq(2))
          .then({ events: [], outcome: { ok: true, duplicate: true } });
      });

      it('records no gap for a duplicate, a seq-conflict or an implausible report', () => {
        const recorded = [...history, fenceRejected({ atMillis: 1400, seq: 1 })];
        given(recorded)
          .at(at(1500))
          .when(reportSeq(1))
          .then({ events: [], outcome: { ok: true, duplicate: true } });
        given(history)
          .at(at(1500))
          .when(reportSeq(4, { current: { holderId: 'agent-b', fence: 900_000_000 } }))
          .then({
            events: [],
            outcome: {
              ok: false,
              reason: 'implausible',
              field: 'current.fence',
              message: expect.stringContaining('current.fence') as string,
            },
          });
      });
    });

    it('refuses a report with an unknown kind', () => {
      given([started])
        .at(at(500))
        .when({ ...report, kind: 'odd' as 'stale' })
        .thenThrows(RangeError);
    });
  });

  describe('AdmitFence', () => {
    const admit = (holderId: string, fence: number, resource = 'slot') =>
      ({ type: 'AdmitFence', gateId: 'gate-1', resource, holderId, fence }) as const;
    const history = [
      started,
      grantedA,
      leaseReleased('slot', 'agent-a', 1, { atMillis: 1100 }),
      leaseGranted('slot', 'agent-b', 2, { atMillis: 1200 }),
      leaseGranted('other', 'agent-c', 3, { atMillis: 1300 }),
    ];

    it('records that a gate raised its floor to the current fence of its holder', () => {
      given(history)
        .at(at(1500))
        .when(admit('agent-b', 2))
        .then({
          events: [fenceAdmitted('slot', 'agent-b', 2, { atMillis: 1500 })],
          outcome: { ok: true },
        });
    });

    it("records an admit of an earlier generation's fence", () => {
      given(history)
        .at(at(1500))
        .when(admit('agent-a', 1))
        .then({ events: [fenceAdmitted('slot', 'agent-a', 1, { atMillis: 1500 })], outcome: { ok: true } });
    });

    it.each([
      ['a fence never issued, for a holder that never held', admit('nobody', 999_999_999), 'fence'],
      ['a fence issued only for another resource', admit('agent-c', 3), 'fence'],
      ['a fence on a resource that never had a lease', admit('agent-a', 1, 'never-leased'), 'fence'],
      ['the current fence for another holder', admit('agent-x', 2), 'holderId'],
    ] as const)('refuses %s as implausible, naming the field, with no event', (_what, command, field) => {
      given(history)
        .at(at(1500))
        .when(command)
        .then({
          events: [],
          outcome: { ok: false, reason: 'implausible', field, message: expect.stringContaining(field) as string },
        });
    });
  });

  describe("ReportFloor (a gate's floor, after the log lost fences)", () => {
    const report = (holderId: string, fence: number, resource = 'slot', marginFences = 100) =>
      ({ type: 'ReportFloor', gateId: 'gate-1', resource, holderId, fence, marginFences }) as const;
    const freshLog = [started];

    it("raises the resource's highest fence and the counter above a floor this log never issued, so the next grant is above it", () => {
      // Given a log that lost everything and a gate whose floor is fence 57
      const { events } = given(freshLog)
        .at(at(1500))
        .when(report('agent-a', 57))
        .then({
          events: [fenceFloorReported('slot', 'agent-a', 57, { atMillis: 1500, raisedTo: 157 })],
          outcome: { ok: true, raised: true, fenceCounter: 157 },
        });
      // Then the next grant, on any resource, is above the floor and its margin, and the old fence counts as issued here
      given([...freshLog, ...events])
        .at(at(1600))
        .when(acquire('slot', 'agent-b', 'req-b'))
        .then({
          events: [leaseGranted('slot', 'agent-b', 158, { atMillis: 1600, requestId: 'req-b' })],
          outcome: { ok: true, grant: expect.objectContaining({ fence: 158 }) as never },
        });
      given([...freshLog, ...events])
        .at(at(1600))
        .when(renew('slot', 'agent-a', 57))
        .then({ events: [], outcome: { ok: false, reason: 'expired' } });
    });

    it('appends nothing for a floor the log knows of, and never lowers the counter', () => {
      given([started, grantedA])
        .at(at(1500))
        .when(report('agent-a', 1))
        .then({ events: [], outcome: { ok: true, raised: false, fenceCounter: 1 } });
      const raised = [started, fenceFloorReported('slot', 'agent-a', 57, { atMillis: 10, raisedTo: 157 })];
      given(raised)
        .at(at(1500))
        .when(report('agent-a', 57))
        .then({ events: [], outcome: { ok: true, raised: false, fenceCounter: 157 } });
      given(raised)
        .at(at(1500))
        .when(report('agent-c', 40, 'other'))
        .then({
          events: [fenceFloorReported('other', 'agent-c', 40, { atMillis: 1500, raisedTo: 157 })],
          outcome: { ok: true, raised: true, fenceCounter: 157 },
        });
    });

    it('appends nothing for the fence a pending fence-first reservation holds, which a gate may already have as its floor', () => {
      // Given agent-a's lease released and fence 2 reserved for agent-b (its gate admitted it; the grant waits for the admit to be recorded)
      const reserved = [
        started,
        grantedA,
        leaseReleased('slot', 'agent-a', 1, { atMillis: 1050 }),
        fenceReserved('slot', 'agent-b', 2, {
          atMillis: 1100,
          requestId: 'req-b',
          ttlMillis: 10_000,
          deadlineMillis: 6100,
        }),
      ];
      // When the gate reports that floor, Then nothing is learned and the counter stays where it is
      given(reserved)
        .at(at(1200))
        .when(report('agent-b', 2))
        .then({ events: [], outcome: { ok: true, raised: false, fenceCounter: 2 } });
    });

    it('refuses a floor whose margin would pass the largest safe fence as implausible, with no event', () => {
      given(freshLog)
        .at(at(1500))
        .when(report('agent-a', Number.MAX_SAFE_INTEGER - 10))
        .then({
          events: [],
          outcome: {
            ok: false,
            reason: 'implausible',
            field: 'fence',
            message: expect.stringContaining('fence') as string,
          },
        });
    });

    it('refuses a floor that would leave fewer grants than the margin before the largest fence, so no later acquire finds the counter exhausted', () => {
      // The floor a reviewer sent: with it accepted, the counter stood at the largest fence and every acquire failed.
      given(freshLog)
        .at(at(1500))
        .when(report('agent-a', Number.MAX_SAFE_INTEGER - 100))
        .then({
          events: [],
          outcome: {
            ok: false,
            reason: 'implausible',
            field: 'fence',
            message: expect.stringContaining('fewer than 100 fences to grant') as string,
          },
        });
      // The largest floor still accepted leaves exactly the margin's room for grants
      given(freshLog)
        .at(at(1500))
        .when(report('agent-a', Number.MAX_SAFE_INTEGER - 201))
        .then({
          events: [
            fenceFloorReported('slot', 'agent-a', Number.MAX_SAFE_INTEGER - 201, {
              atMillis: 1500,
              raisedTo: Number.MAX_SAFE_INTEGER - 101,
            }),
          ],
          outcome: { ok: true, raised: true, fenceCounter: Number.MAX_SAFE_INTEGER - 101 },
        });
    });
  });

  describe('Checkpoint', () => {
    it("records this boot's reading while a lease is live", () => {
      given([started, grantedA])
        .at(at(2000))
        .when({ type: 'Checkpoint' })
        .then({ events: [coordinatorCheckpointed({ atMillis: 2000 })], outcome: { ok: true, checkpointed: true } });
    });

    it('records nothing when no lease is live', () => {
      given([started])
        .at(at(2000))
        .when({ type: 'Checkpoint' })
        .then({ events: [], outcome: { ok: true, checkpointed: false } });
    });
  });

  describe('TakeSnapshot', () => {
    it('marks the position of its own event as the one the snapshot covers', () => {
      given([started, grantedA])
        .at(at(2000))
        .when({ type: 'TakeSnapshot' })
        .then({ events: [snapshotTaken(3, { atMillis: 2000 })], outcome: { ok: true, coversPosition: 3 } });
    });
  });

  describe('StartCoordinator', () => {
    const start = (burnFencesThrough = 0) =>
      ({
        type: 'StartCoordinator',
        namespace: 'default',
        eventsReplayed: 3,
        fromSnapshot: false,
        replayMillis: 2,
        burnFencesThrough,
      }) as const;

    it('starts a fresh log with fence 0 and no carried leases', () => {
      given([])
        .at(at(70, { bootId: 'boot-1' }))
        .when({ ...start(), eventsReplayed: 0 })
        .then({
          events: [coordinatorStarted({ atMillis: 70, eventsReplayed: 0, replayMillis: 2 })],
          outcome: { ok: true, recoveredFence: 0, graceDeadline: Instant.of(70, 'boot-1'), carriedLeases: 0 },
        });
    });

    it('carries a live lease with the time it had left when the dead boot was last observed', () => {
      // Given: granted at 1000 until 11 000 on boot-1, last seen alive at 4000 (a checkpoint)
      given([started, grantedA, coordinatorCheckpointed({ atMillis: 4000 })])
        // When boot-2 starts at its own reading 50
        .at(at(50, { bootId: 'boot-2' }))
        .when(start())
        // Then the lease has 11 000 - 4000 = 7000 ms of grace in boot-2's clock
        .then({
          events: [
            coordinatorStarted({
              bootId: 'boot-2',
              atMillis: 50,
              previousBootId: 'boot-1',
              recoveredFence: 1,
              eventsReplayed: 3,
              replayMillis: 2,
              graceDeadlineMillis: 7050,
              carriedLeases: [{ resource: 'slot', holderId: 'agent-a', fence: 1, expiresAtMillis: 7050 }],
            }),
          ],
          outcome: { ok: true, recoveredFence: 1, graceDeadline: Instant.of(7050, 'boot-2'), carriedLeases: 1 },
        });
    });

    it('gives a lease that was already past its expiry no grace', () => {
      given([started, grantedA, coordinatorCheckpointed({ atMillis: 12_000 })])
        .at(at(50, { bootId: 'boot-2' }))
        .when(start())
        .then({
          events: [
            coordinatorStarted({
              bootId: 'boot-2',
              atMillis: 50,
              previousBootId: 'boot-1',
              recoveredFence: 1,
              eventsReplayed: 3,
              replayMillis: 2,
              graceDeadlineMillis: 50,
              carriedLeases: [{ resource: 'slot', holderId: 'agent-a', fence: 1, expiresAtMillis: 50 }],
            }),
          ],
        });
    });

    it('shrinks the grace with every boot that lived, so fast restarts cannot keep a dead lease alive', () => {
      // boot-2 carried 7000 ms (until 7050); it lived until its reading 3050; boot-3 gives 4000 ms.
      const boot2 = coordinatorStarted({
        bootId: 'boot-2',
        atMillis: 50,
        previousBootId: 'boot-1',
        recoveredFence: 1,
        graceDeadlineMillis: 7050,
        carriedLeases: [{ resource: 'slot', holderId: 'agent-a', fence: 1, expiresAtMillis: 7050 }],
      });
      given([
        started,
        grantedA,
        coordinatorCheckpointed({ atMillis: 4000 }),
        boot2,
        coordinatorCheckpointed({ bootId: 'boot-2', atMillis: 3050 }),
      ])
        .at(at(10, { bootId: 'boot-3' }))
        .when(start())
        .then({
          events: [
            coordinatorStarted({
              bootId: 'boot-3',
              atMillis: 10,
              previousBootId: 'boot-2',
              recoveredFence: 1,
              eventsReplayed: 3,
              replayMillis: 2,
              graceDeadlineMillis: 4010,
              carriedLeases: [{ resource: 'slot', holderId: 'agent-a', fence: 1, expiresAtMillis: 4010 }],
            }),
          ],
        });
    });

    it('raises the fence counter over fences minted by appends with an unknown outcome', () => {
      given([started, grantedA])
        .at(at(5, { bootId: 'boot-2' }))
        .when(start(9))
        .then({
          events: [
            coordinatorStarted({
              bootId: 'boot-2',
              atMillis: 5,
              previousBootId: 'boot-1',
              recoveredFence: 9,
              eventsReplayed: 3,
              replayMillis: 2,
              graceDeadlineMillis: 10_005,
              carriedLeases: [{ resource: 'slot', holderId: 'agent-a', fence: 1, expiresAtMillis: 10_005 }],
            }),
          ],
        });
    });

    it('refuses a boot id the log has already used', () => {
      given([started])
        .at(at(5, { bootId: 'boot-1' }))
        .when(start())
        .thenThrows(ProtocolMisuseError);
    });

    it("refuses another namespace than the log's", () => {
      given([started])
        .at(at(5, { bootId: 'boot-2' }))
        .when({ ...start(), namespace: 'other' })
        .thenThrows(/namespace/);
    });
  });

  describe('misuse', () => {
    it('refuses commands before the coordinator started', () => {
      given([])
        .at(at(1))
        .when(acquire('slot', 'agent-a', 'req-a'))
        .thenThrows(ProtocolMisuseError);
    });

    it('refuses a now from another clock domain than the current boot', () => {
      given([started])
        .at(at(1, { bootId: 'boot-0' }))
        .when(acquire('slot', 'agent-a', 'req-a'))
        .thenThrows(ClockDomainError);
    });

    it('refuses a malformed acquire before any fence is minted', () => {
      given([started])
        .at(at(1))
        .when(acquire('slot', 'agent-a', 'req-a', 0))
        .thenThrows(/ttlMillis/);
    });
  });
});
