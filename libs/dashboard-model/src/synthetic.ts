/**
 * A seeded generator of realistic event logs for tests, benchmarks and demos without a
 * coordinator: many resources, holders that renew, release, stall and expire, reassignments,
 * stale writes refused by gates (`FenceRejected`), gate admissions, coordinator restarts that
 * carry live leases into a new boot, snapshots and checkpoints. Every event passes the
 * protocol's `RecordedEventSchema`; the same options give the same log.
 *
 * Default sizes are the dashboard's scale target: 500 lanes, 20 000 generations, 2 000 rejections.
 *
 * @see docs/design.md § "The event-sourced coordinator" (Events, Recovery)
 */
import type { CarriedLease, CoordinatorEvent, RecordedEvent } from '@lease-fence/protocol';

/** Options of {@link synthesizeEvents}. All durations in milliseconds. */
export interface SyntheticOptions {
  /** PRNG seed (32-bit integer). The same seed and options give the same log. */
  readonly seed: number;
  /** Number of resources (lanes). @defaultValue 500 */
  readonly resources?: number;
  /** Generations of ownership in total, spread evenly over resources. @defaultValue 20_000 */
  readonly generations?: number;
  /** `FenceRejected` events in total (stale writes after a handover). @defaultValue 2_000 */
  readonly rejections?: number;
  /** Coordinator restarts after the first boot. @defaultValue 2 */
  readonly restarts?: number;
  /** Number of distinct holders. @defaultValue 60 */
  readonly holders?: number;
  /** Lease TTL. @defaultValue 10_000 */
  readonly ttlMillis?: number;
  /** Coordinator downtime per restart. @defaultValue 400 */
  readonly downtimeMillis?: number;
  /** Wall time of the first event, epoch milliseconds. @defaultValue 1_780_000_000_000 (2026-05-28) */
  readonly startWallMillis?: number;
  /** A `SnapshotTaken` every this many positions (0 = none). @defaultValue 10_000 */
  readonly snapshotEvery?: number;
  /** Coordinator namespace. @defaultValue 'default' */
  readonly namespace?: string;
}

/** Sizes of the scale target, for benchmarks: 500 lanes, 20 000 generations, 2 000 rejections. */
export const SCALE_TARGET = { resources: 500, generations: 20_000, rejections: 2_000 } as const;

type EndPlan = 'released' | 'expired' | 'reassigned';

interface GenPlan {
  readonly resource: string;
  readonly holderId: string;
  readonly requestId: string;
  readonly startWall: number;
  readonly renewWalls: number[];
  readonly endWall: number;
  readonly end: EndPlan;
  fence: number;
  expiryWall: number;
  open: boolean;
}

type Intent =
  | { readonly kind: 'grant'; readonly wall: number; readonly seq: number; readonly gen: GenPlan }
  | { readonly kind: 'renew'; readonly wall: number; readonly seq: number; readonly gen: GenPlan; readonly n: number }
  | { readonly kind: 'end'; readonly wall: number; readonly seq: number; readonly gen: GenPlan }
  | {
      readonly kind: 'admit';
      readonly wall: number;
      readonly seq: number;
      readonly gen: GenPlan;
      readonly gateId: string;
    }
  | {
      readonly kind: 'reject';
      readonly wall: number;
      readonly seq: number;
      readonly stale: GenPlan;
      readonly current: GenPlan;
      readonly gateId: string;
      readonly doubleGrant: boolean;
    }
  | { readonly kind: 'checkpoint'; readonly wall: number; readonly seq: number };

const RESOURCE_KINDS = ['deploy-slot', 'migration', 'leader', 'cron', 'index-build', 'release-train'];
const TEAMS = ['web', 'api', 'billing', 'search', 'infra', 'ml', 'data', 'mobile'];
const AGENT_KINDS = ['coder', 'planner', 'reviewer', 'deployer', 'indexer'];

/**
 * Generates a log: recorded events with contiguous positions from 1, wall times increasing.
 *
 * @param options - See {@link SyntheticOptions}.
 * @returns The events, in log order.
 * @throws RangeError when a size is negative or not an integer, or `generations < resources`.
 */
export function synthesizeEvents(options: SyntheticOptions): RecordedEvent[] {
  const resources = checkCount('resources', options.resources ?? SCALE_TARGET.resources, 1);
  const generations = checkCount('generations', options.generations ?? SCALE_TARGET.generations, resources);
  const rejections = checkCount('rejections', options.rejections ?? SCALE_TARGET.rejections, 0);
  const restarts = checkCount('restarts', options.restarts ?? 2, 0);
  const holderCount = checkCount('holders', options.holders ?? 60, 2);
  const ttlMillis = checkCount('ttlMillis', options.ttlMillis ?? 10_000, 10);
  const downtimeMillis = checkCount('downtimeMillis', options.downtimeMillis ?? 400, 0);
  const startWall = options.startWallMillis ?? 1_780_000_000_000;
  const snapshotEvery = checkCount('snapshotEvery', options.snapshotEvery ?? 10_000, 0);
  const namespace = options.namespace ?? 'default';
  const random = mulberry32(options.seed);
  const between = (lo: number, hi: number): number => lo + random() * (hi - lo);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

  const holders = Array.from(
    { length: holderCount },
    (_, i) => `${pick(AGENT_KINDS)}-${String(i + 1).padStart(2, '0')}`,
  );
  const resourceNames = Array.from(
    { length: resources },
    (_, i) =>
      `${RESOURCE_KINDS[i % RESOURCE_KINDS.length]}:${TEAMS[Math.floor(i / RESOURCE_KINDS.length) % TEAMS.length]}-${String(i).padStart(3, '0')}`,
  );
  const gateOf = (resource: string): string => `gate-${resource.split(':')[1] ?? resource}`;
  const renewEvery = ttlMillis / 3;

  // 1. Plan each resource's generations on its own timeline.
  const intents: Intent[] = [];
  let seq = 0;
  const plans: GenPlan[][] = [];
  let lastWall = startWall;
  for (let r = 0; r < resources; r += 1) {
    const resource = resourceNames[r] as string;
    const count = Math.floor(generations / resources) + (r < generations % resources ? 1 : 0);
    const lane: GenPlan[] = [];
    let t = startWall + 50 + between(0, ttlMillis * 2);
    let previousHolder = '';
    for (let g = 0; g < count; g += 1) {
      let holderId = pick(holders);
      if (holderId === previousHolder) holderId = holders[(holders.indexOf(holderId) + 1) % holders.length] as string;
      previousHolder = holderId;
      const roll = random();
      const end: EndPlan = roll < 0.6 ? 'released' : roll < 0.85 ? 'reassigned' : 'expired';
      const holdMillis = between(ttlMillis * 0.2, ttlMillis * 4);
      const renewWalls: number[] = [];
      for (let at = t + renewEvery; at < t + holdMillis; at += renewEvery * between(0.9, 1.1)) renewWalls.push(at);
      const lastRenew = renewWalls[renewWalls.length - 1] ?? t;
      const endWall = end === 'released' ? t + holdMillis : lastRenew + ttlMillis + between(20, 600);
      const plan: GenPlan = {
        resource,
        holderId,
        requestId: `req-${r}-${g}-${Math.floor(random() * 1e9).toString(36)}`,
        startWall: t,
        renewWalls,
        endWall,
        end,
        fence: 0,
        expiryWall: 0,
        open: false,
      };
      lane.push(plan);
      intents.push({ kind: 'grant', wall: t, seq: seq++, gen: plan });
      renewWalls.forEach((wall, n) => intents.push({ kind: 'renew', wall, seq: seq++, gen: plan, n }));
      intents.push({ kind: 'end', wall: endWall, seq: seq++, gen: plan });
      if (random() < 0.3)
        intents.push({ kind: 'admit', wall: t + between(1, 40), seq: seq++, gen: plan, gateId: gateOf(resource) });
      t = end === 'reassigned' ? endWall : endWall + between(0, ttlMillis * 1.5);
      lastWall = Math.max(lastWall, endWall);
    }
    plans.push(lane);
  }

  // 2. Stale writes: a holder writes after its generation ended and the next one was granted.
  const candidates = plans.flatMap((lane) =>
    lane.slice(0, -1).map((stale, i) => ({ stale, current: lane[i + 1] as GenPlan })),
  );
  for (let k = 0; k < rejections && candidates.length > 0; k += 1) {
    const { stale, current } = pick(candidates);
    const currentSpan = current.endWall - current.startWall;
    const doubleGrant = random() < 0.01;
    intents.push({
      kind: 'reject',
      wall: current.startWall + between(5, Math.max(6, Math.min(3_000, currentSpan / 2))),
      seq: seq++,
      stale,
      current,
      gateId: gateOf(stale.resource),
      doubleGrant,
    });
  }
  for (let w = startWall + 30_000; w < lastWall; w += between(20_000, 60_000))
    intents.push({ kind: 'checkpoint', wall: w, seq: seq++ });
  intents.sort((a, b) => a.wall - b.wall || a.seq - b.seq);

  // 3. Restarts: crash times spread over the span; the coordinator is down for downtimeMillis.
  const crashWalls = Array.from(
    { length: restarts },
    (_, k) => startWall + ((lastWall - startWall) * (k + 1)) / (restarts + 1),
  );

  // 4. Materialize in wall order: positions, fences, boots.
  const events: RecordedEvent[] = [];
  let fenceCounter = 0;
  let bootIndex = 0;
  let bootStartWall = startWall;
  let bootOrigin = between(800, 4_000);
  let bootId = bootIdOf(0, random);
  let snapshots = 0;
  const gateSeq = new Map<string, number>();
  const open = new Set<GenPlan>();
  const atOf = (wall: number): number => round3(wall - bootStartWall + bootOrigin);
  const push = (wall: number, event: CoordinatorEvent): void => {
    events.push({ position: events.length + 1, recordedAtMillis: wall + 1, event });
    if (snapshotEvery > 0 && events.length % snapshotEvery === 0) {
      snapshots += 1;
      events.push({
        position: events.length + 1,
        recordedAtMillis: wall + 1,
        event: {
          type: 'SnapshotTaken',
          version: 1,
          data: { bootId, atMillis: atOf(wall), wallMillis: wall, coversPosition: events.length },
        },
      });
    }
  };
  const started = (
    wall: number,
    previousBootId: string | undefined,
    carried: CarriedLease[],
    replayed: number,
  ): void => {
    push(wall, {
      type: 'CoordinatorStarted',
      version: 1,
      data: {
        bootId,
        atMillis: atOf(wall),
        wallMillis: wall,
        namespace,
        ...(previousBootId === undefined ? {} : { previousBootId }),
        recoveredFence: fenceCounter,
        eventsReplayed: replayed,
        fromSnapshot: snapshots > 0,
        replayMillis: round3(previousBootId === undefined ? between(2, 10) : between(40, 400)),
        graceDeadlineMillis: carried.reduce((max, c) => Math.max(max, c.expiresAtMillis), atOf(wall)),
        carriedLeases: carried,
      },
    });
  };
  started(startWall, undefined, [], 0);
  let nextCrash = 0;
  let downUntil = -Infinity;
  for (const intent of intents) {
    let wall = intent.wall;
    for (
      let crashWall = crashWalls[nextCrash];
      crashWall !== undefined && wall >= crashWall;
      crashWall = crashWalls[nextCrash]
    ) {
      nextCrash += 1;
      const recoverWall = crashWall + downtimeMillis;
      const previousBootId = bootId;
      const replayed = events.length;
      bootIndex += 1;
      bootId = bootIdOf(bootIndex, random);
      bootStartWall = recoverWall;
      bootOrigin = between(800, 4_000);
      const carried: CarriedLease[] = [];
      for (const gen of [...open].sort((a, b) => a.fence - b.fence)) {
        if (gen.expiryWall > crashWall) {
          carried.push({
            resource: gen.resource,
            holderId: gen.holderId,
            fence: gen.fence,
            expiresAtMillis: atOf(recoverWall + (gen.expiryWall - crashWall)),
          });
          gen.expiryWall = recoverWall + (gen.expiryWall - crashWall);
        } else {
          open.delete(gen);
        }
      }
      started(recoverWall, previousBootId, carried, replayed);
      downUntil = recoverWall;
    }
    wall = round3(Math.max(wall, downUntil));
    const stamp = { bootId, atMillis: atOf(wall), wallMillis: wall };
    switch (intent.kind) {
      case 'grant': {
        const gen = intent.gen;
        fenceCounter += 1;
        gen.fence = fenceCounter;
        gen.expiryWall = wall + ttlMillis;
        open.add(gen);
        push(wall, {
          type: 'LeaseGranted',
          version: 1,
          data: {
            ...stamp,
            resource: gen.resource,
            holderId: gen.holderId,
            fence: gen.fence,
            requestId: gen.requestId,
            ttlMillis,
            expiresAtMillis: round3(stamp.atMillis + ttlMillis),
          },
        });
        break;
      }
      case 'renew': {
        const gen = intent.gen;
        if (!open.has(gen)) break;
        gen.expiryWall = wall + ttlMillis;
        push(wall, {
          type: 'LeaseRenewed',
          version: 1,
          data: {
            ...stamp,
            resource: gen.resource,
            holderId: gen.holderId,
            fence: gen.fence,
            requestId: `${gen.requestId}-r${intent.n + 1}`,
            ttlMillis,
            expiresAtMillis: round3(stamp.atMillis + ttlMillis),
          },
        });
        break;
      }
      case 'end': {
        const gen = intent.gen;
        const wasOpen = open.delete(gen);
        const type = gen.end === 'released' ? 'LeaseReleased' : 'LeaseExpired';
        if (type === 'LeaseReleased' && !wasOpen) break;
        push(wall, {
          type,
          version: 1,
          data: { ...stamp, resource: gen.resource, holderId: gen.holderId, fence: gen.fence },
        });
        break;
      }
      case 'admit': {
        const gen = intent.gen;
        if (!open.has(gen)) break;
        push(wall, {
          type: 'FenceAdmitted',
          version: 1,
          data: { ...stamp, resource: gen.resource, gateId: intent.gateId, holderId: gen.holderId, fence: gen.fence },
        });
        break;
      }
      case 'reject': {
        const { stale, current, gateId } = intent;
        const n = (gateSeq.get(gateId) ?? 0) + 1;
        gateSeq.set(gateId, n);
        const rejected = intent.doubleGrant
          ? { holderId: stale.holderId, fence: current.fence }
          : { holderId: stale.holderId, fence: stale.fence };
        push(wall, {
          type: 'FenceRejected',
          version: 1,
          data: {
            ...stamp,
            resource: stale.resource,
            gateId,
            seq: n,
            kind: intent.doubleGrant ? 'double-grant' : 'stale',
            rejected,
            current: { holderId: current.holderId, fence: current.fence },
            gateWallMillis: round3(wall - between(1, 60)),
          },
        });
        break;
      }
      case 'checkpoint':
        push(wall, { type: 'CoordinatorCheckpointed', version: 1, data: stamp });
        break;
    }
  }
  return events;
}

function checkCount(field: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`synthesizeEvents: ${field} must be an integer ≥ ${min}, got ${String(value)}`);
  }
  return value;
}

function bootIdOf(index: number, random: () => number): string {
  return `boot-${index}-${Math.floor(random() * 0xffffffff)
    .toString(16)
    .padStart(8, '0')}`;
}

function round3(millis: number): number {
  return Math.round(millis * 1000) / 1000;
}

/** mulberry32: a small, fast, seeded 32-bit PRNG returning floats in [0, 1). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
