/**
 * Test helper (not shipped): a fast-check arbitrary of schema-valid but otherwise unruly logs —
 * renewals of the wrong fence, ends of unknown generations, restarts that carry or drop leases,
 * wall clocks that step backwards, gaps in positions. The fold must handle all of them.
 *
 * @internal
 */
import fc from 'fast-check';
import type { CarriedLease, RecordedEvent } from '@lease-fence/protocol';
import { LogBuilder } from './log-builder.js';

/** @internal Resources used by {@link arbitraryLog}. */
export const ARBITRARY_RESOURCES = ['slot', 'db:migrate', 'leader'] as const;
const HOLDERS = ['agent-a', 'agent-b', 'agent-c'] as const;

type Op =
  | { kind: 'grant'; resource: number; holder: number; fenceStep: number }
  | { kind: 'renew' | 'release' | 'expire'; resource: number; holder: number; fenceOffset: number; matching: boolean }
  | { kind: 'reject'; resource: number; holder: number; fenceOffset: number }
  | { kind: 'admit'; resource: number }
  | { kind: 'floor'; resource: number; reported: boolean; fenceOffset: number }
  | { kind: 'fence-first'; resource: number; holder: number; admit: boolean; advanceMillis: number }
  | { kind: 'restart'; carry: boolean[]; atMillis: number }
  | { kind: 'checkpoint' };

const resourceIndex = fc.nat({ max: ARBITRARY_RESOURCES.length - 1 });
const holderIndex = fc.nat({ max: HOLDERS.length - 1 });

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('grant' as const),
      resource: resourceIndex,
      holder: holderIndex,
      fenceStep: fc.integer({ min: -1, max: 3 }),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constantFrom('renew' as const, 'release' as const, 'expire' as const),
      resource: resourceIndex,
      holder: holderIndex,
      fenceOffset: fc.integer({ min: -2, max: 2 }),
      matching: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('reject' as const),
      resource: resourceIndex,
      holder: holderIndex,
      fenceOffset: fc.integer({ min: -3, max: 0 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('admit' as const), resource: resourceIndex }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('floor' as const),
      resource: resourceIndex,
      reported: fc.boolean(),
      fenceOffset: fc.integer({ min: -2, max: 1 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('fence-first' as const),
      resource: resourceIndex,
      holder: holderIndex,
      admit: fc.boolean(),
      advanceMillis: fc.integer({ min: 0, max: 500 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('restart' as const),
      carry: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
      atMillis: fc.integer({ min: 0, max: 5_000 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('checkpoint' as const) }) },
);

const step = fc.record({
  op,
  /** Wall and monotonic advance; sometimes the wall clock steps back. */
  advanceMillis: fc.integer({ min: 0, max: 15_000 }),
  wallStepMillis: fc.oneof(
    { weight: 9, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: -3_000, max: 3_000 }) },
  ),
  positionGap: fc.oneof(
    { weight: 9, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }) },
  ),
});

/**
 * @internal Logs of up to `maxLength` events, starting with a `CoordinatorStarted`.
 */
export function arbitraryLog(maxLength = 80): fc.Arbitrary<RecordedEvent[]> {
  return fc.array(step, { maxLength }).map((steps) => {
    const log = new LogBuilder({ ttlMillis: 8_000 });
    log.started();
    let fence = 0;
    let boot = 0;
    const last = new Map<number, { holder: number; fence: number }>();
    for (const s of steps) {
      log.advance(s.advanceMillis).skip(s.positionGap);
      log.wallMillis = Math.max(0, log.wallMillis + s.wallStepMillis);
      const o = s.op;
      switch (o.kind) {
        case 'grant': {
          fence = Math.max(1, fence + o.fenceStep);
          last.set(o.resource, { holder: o.holder, fence });
          log.granted(ARBITRARY_RESOURCES[o.resource] as string, HOLDERS[o.holder] as string, fence);
          break;
        }
        case 'renew':
        case 'release':
        case 'expire': {
          const current = last.get(o.resource);
          const holder = o.matching && current !== undefined ? current.holder : o.holder;
          const f = Math.max(1, (current?.fence ?? 1) + (o.matching ? 0 : o.fenceOffset));
          const resource = ARBITRARY_RESOURCES[o.resource] as string;
          const holderId = HOLDERS[holder] as string;
          if (o.kind === 'renew') log.renewed(resource, holderId, f);
          else if (o.kind === 'release') log.released(resource, holderId, f);
          else log.expired(resource, holderId, f);
          break;
        }
        case 'reject': {
          const current = last.get(o.resource) ?? { holder: 0, fence: 1 };
          log.rejected(
            ARBITRARY_RESOURCES[o.resource] as string,
            { holderId: HOLDERS[o.holder] as string, fence: Math.max(1, current.fence + o.fenceOffset) },
            { holderId: HOLDERS[current.holder] as string, fence: current.fence },
          );
          break;
        }
        case 'admit': {
          const current = last.get(o.resource) ?? { holder: 0, fence: 1 };
          log.admitted(ARBITRARY_RESOURCES[o.resource] as string, HOLDERS[current.holder] as string, current.fence);
          break;
        }
        case 'floor': {
          // A gate's floor near the resource's fence: `FenceAdmitted`, or `FenceFloorReported` (which raises the counter).
          const current = last.get(o.resource) ?? { holder: 0, fence: 1 };
          const resource = ARBITRARY_RESOURCES[o.resource] as string;
          const holderId = HOLDERS[current.holder] as string;
          const floor = Math.max(1, current.fence + o.fenceOffset);
          if (o.reported) {
            fence = Math.max(fence, floor) + 2;
            log.floorReported(resource, holderId, floor, fence);
          } else log.admitted(resource, holderId, floor);
          break;
        }
        case 'fence-first': {
          // Reserve the next fence; a gate admits it and it is granted, or it is burned.
          fence += 1;
          const resource = ARBITRARY_RESOURCES[o.resource] as string;
          const holderId = HOLDERS[o.holder] as string;
          log.reserved(resource, holderId, fence);
          log.advance(o.advanceMillis);
          if (o.admit) {
            log.admitted(resource, holderId, fence);
            last.set(o.resource, { holder: o.holder, fence });
            log.granted(resource, holderId, fence);
          } else log.burned(resource, holderId, fence);
          break;
        }
        case 'restart': {
          boot += 1;
          const carried: Omit<CarriedLease, 'expiresAtMillis'>[] = [];
          for (const [r, c] of last) {
            if (o.carry[r] === true)
              carried.push({
                resource: ARBITRARY_RESOURCES[r] as string,
                holderId: HOLDERS[c.holder] as string,
                fence: c.fence,
              });
          }
          log.restart(`boot-${boot}`, { atMillis: o.atMillis, carried, recoveredFence: fence, graceMillis: 6_000 });
          break;
        }
        case 'checkpoint':
          log.checkpointed();
          break;
      }
    }
    return log.events;
  });
}
