// Prints FenceGate.commit's overhead per call against calling the write directly, in the same
// process (a ratio and nanoseconds per call). A figure, not a test: nothing here asserts.
// Run after `npx nx run lease-fence:build`:  node libs/lease-fence/bench/fence-gate-commit.bench.mjs
import { FenceGate } from '../dist/index.js';

const CALLS = 5_000_000;
let sink = 0;
const write = () => {
  sink += 1;
};

const time = (label, body) => {
  body(CALLS / 10); // warm-up
  const start = process.hrtime.bigint();
  body(CALLS);
  const nanos = Number(process.hrtime.bigint() - start) / CALLS;
  console.log(`${label.padEnd(34)} ${nanos.toFixed(1)} ns/call`);
  return nanos;
};

const direct = time('write() directly', (n) => {
  for (let i = 0; i < n; i += 1) write();
});
const gate = new FenceGate('deploy-slot');
const token = { resource: 'deploy-slot', holderId: 'agent-a', fence: 1 };
const same = time('gate.commit(same token, write)', (n) => {
  for (let i = 0; i < n; i += 1) gate.commit(token, write);
});
const rising = new FenceGate('deploy-slot');
const rise = time('gate.commit(rising fence, write)', (n) => {
  const base = rising.floor?.fence ?? 0;
  for (let i = 1; i <= n; i += 1)
    rising.commit({ resource: 'deploy-slot', holderId: 'agent-a', fence: base + i }, write);
});
console.log(
  `overhead: same token ${(same - direct).toFixed(1)} ns, rising fence ${(rise - direct).toFixed(1)} ns (sink ${sink})`,
);
