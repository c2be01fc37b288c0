/**
 * `npm run bench:lib`: the library's hot calls with tinybench, in one process.
 *
 * - `FenceGate.commit(token, write)` against calling the same `write` directly: the gate's
 *   overhead per call in nanoseconds (the check and raise of the floor), for a holder that keeps
 *   writing under one fence and for a fence that rises on every call.
 * - The in-memory `LeaseCoordinator`: `acquire` + `release` of one lease (a fence minted and
 *   retired per pair).
 * - `LeaseClient`: `beginAcquire` + `completeAcquire` (stamp `sentAt`, then anchor the deadline).
 *
 * Each task runs an inner loop of `CALLS` calls, so tinybench's per-iteration cost is spread
 * over them; figures are per call. Figures, not a test: nothing here asserts.
 */
import { Bench } from 'tinybench';
import { createManualClock, FenceGate, type Grant, Instant, LeaseClient, LeaseCoordinator } from 'lease-fence';
import { machineLine } from './support/bench-env.js';
import { fixed, markdownTable } from './support/stats.js';

const CALLS = 1_000;
let sink = 0;
const write = (): void => {
  sink += 1;
};

// FenceGate: the same token again and again (the usual case: one holder writing under its lease) …
const gate = new FenceGate('deploy-slot');
const token = { resource: 'deploy-slot', holderId: 'agent-a', fence: 1 };
// … and a fence that rises on every call (a new holder each time: the floor moves).
const risingGate = new FenceGate('deploy-slot');
let risingFence = 0;
const risingTokens = Array.from({ length: CALLS }, () => ({ resource: 'deploy-slot', holderId: 'agent-a', fence: 0 }));

// The in-memory coordinator: acquire then release, on a manual clock that does not move.
const coordinator = new LeaseCoordinator({ clock: createManualClock('coordinator'), ttlMillis: 30_000 });
let requestCounter = 0;

// The client: beginAcquire then completeAcquire with a grant made for that request.
const client = new LeaseClient({
  clock: createManualClock('agent-a'),
  holderId: 'agent-a',
  clockSkewMillis: 100,
  newRequestId: () => `q-${++requestCounter}`,
});
const expiresAt = Instant.of(30_000, 'coordinator');

const bench = new Bench({ time: 1_000, warmupTime: 200 });
bench
  .add('write() directly', () => {
    for (let i = 0; i < CALLS; i += 1) write();
  })
  .add('gate.commit(same token, write)', () => {
    for (let i = 0; i < CALLS; i += 1) gate.commit(token, write);
  })
  .add('gate.commit(rising fence, write)', () => {
    for (let i = 0; i < CALLS; i += 1) {
      const next = risingTokens[i]!;
      (next as { fence: number }).fence = ++risingFence; // a fresh fence, without allocating in the loop
      risingGate.commit(next, write);
    }
  })
  .add('LeaseCoordinator acquire + release', () => {
    for (let i = 0; i < CALLS; i += 1) {
      const outcome = coordinator.acquire({
        resource: 'deploy-slot',
        holderId: 'agent-a',
        requestId: `c-${++requestCounter}`,
      });
      if (!outcome.ok) throw new Error(`unexpected denial: ${outcome.reason}`);
      coordinator.release({ resource: 'deploy-slot', holderId: 'agent-a', fence: outcome.grant.fence });
    }
  })
  .add('LeaseClient beginAcquire + completeAcquire', () => {
    for (let i = 0; i < CALLS; i += 1) {
      const request = client.beginAcquire('deploy-slot');
      const grant: Grant = {
        resource: 'deploy-slot',
        holderId: 'agent-a',
        fence: i + 1,
        ttlMillis: 30_000,
        requestId: request.requestId,
        coordinatorExpiresAt: expiresAt,
      };
      sink += client.completeAcquire(request, grant).fence;
    }
  });

await bench.run();

/** Nanoseconds per call of a task: its mean latency (ms per inner loop) over CALLS. */
const nanosPerCall = (name: string): number => {
  const result = bench.getTask(name)?.result;
  if (result === undefined || !('latency' in result)) throw new Error(`task ${name} has no result`);
  return (result.latency.mean * 1e6) / CALLS;
};
const marginOf = (name: string): number => {
  const result = bench.getTask(name)?.result;
  return result !== undefined && 'latency' in result ? result.latency.rme : Number.NaN;
};

const direct = nanosPerCall('write() directly');
console.log(`\n## bench:lib: ${machineLine()}`);
console.log(`tinybench, 1 s per task after 0.2 s warm-up, ${CALLS} calls per iteration; figures per call\n`);
console.log(
  markdownTable(
    ['task', 'ns / call', 'calls / s', '± (rme %)', 'overhead vs write() ns'],
    bench.tasks.map((task) => {
      const ns = nanosPerCall(task.name);
      const isGate = task.name.startsWith('gate.commit');
      return [
        task.name,
        fixed(ns, 1),
        fixed(1e9 / ns, 0),
        fixed(marginOf(task.name), 1),
        isGate ? fixed(ns - direct, 1) : '',
      ];
    }),
  ),
);
console.log(
  `\nFenceGate.commit overhead: same token ${fixed(nanosPerCall('gate.commit(same token, write)') - direct, 1)} ns, ` +
    `rising fence ${fixed(nanosPerCall('gate.commit(rising fence, write)') - direct, 1)} ns per call (target: under 50 ns). sink ${sink > 0 ? 'ok' : 'empty'}`,
);
