import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GATE_PROBE_TTL_MILLIS, GATE_READY_PATH, GateChecks } from './fenced-request.js';

/** A stand-in for a gate's readiness path: answers as `ready` says and counts the probes. */
async function fakeGate(resource: string) {
  const state = { probes: 0, ready: true };
  const server: Server = createServer((request, response) => {
    if (request.url !== GATE_READY_PATH) return void response.writeHead(404).end();
    state.probes += 1;
    response.setHeader('content-type', 'application/json');
    if (!state.ready) return void response.writeHead(503).end(JSON.stringify({ ok: false, reason: 'not-ready' }));
    response.writeHead(200).end(JSON.stringify({ ok: true, resource, floor: null }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { state, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

describe('GateChecks', () => {
  let nowMillis = 0;
  const checks = (ttlMillis?: number) =>
    new GateChecks({ nowMillis: () => nowMillis, ...(ttlMillis === undefined ? {} : { ttlMillis }) });
  const signal = () => AbortSignal.timeout(10_000);

  it('probes a gate once per origin within the TTL, then again after it', async () => {
    // Arrange
    nowMillis = 1_000;
    const gate = await fakeGate('deploy-a');
    const subject = checks();

    // Act + Assert: paths on the same origin share the probe
    expect(await subject.check(`${gate.url}/orders/1`, 'deploy-a', signal())).toBeUndefined();
    nowMillis += GATE_PROBE_TTL_MILLIS - 1;
    expect(await subject.check(`${gate.url}/orders/2?x=1`, 'deploy-a', signal())).toBeUndefined();
    expect(gate.state.probes).toBe(1);

    nowMillis += 1;
    expect(await subject.check(`${gate.url}/orders/3`, 'deploy-a', signal())).toBeUndefined();
    expect(gate.state.probes).toBe(2);
  });

  it('remembers no failed probe: the next call asks again, and a pass is then remembered', async () => {
    nowMillis = 0;
    const gate = await fakeGate('deploy-a');
    gate.state.ready = false;
    const subject = checks();

    expect(await subject.check(gate.url, 'deploy-a', signal())).toMatchObject({ reason: 'not-ready' });
    expect(await subject.check(gate.url, 'deploy-a', signal())).toMatchObject({ reason: 'not-ready' });
    gate.state.ready = true;
    expect(await subject.check(gate.url, 'deploy-a', signal())).toBeUndefined();
    expect(await subject.check(gate.url, 'deploy-a', signal())).toBeUndefined();
    expect(gate.state.probes).toBe(3);
  });

  it('does not let a pass for one resource answer for another, and probes again after forget', async () => {
    nowMillis = 0;
    const gate = await fakeGate('deploy-a');
    const subject = checks();
    await subject.check(gate.url, 'deploy-a', signal());

    expect(await subject.check(gate.url, 'deploy-b', signal())).toMatchObject({ reason: 'other-resource' });
    expect(await subject.check(gate.url, 'deploy-a', signal())).toBeUndefined();
    subject.forget(`${gate.url}/orders/1`);
    expect(await subject.check(gate.url, 'deploy-a', signal())).toBeUndefined();
    expect(gate.state.probes).toBe(4);
  });

  it('probes every call with ttlMillis 0, and refuses a TTL that is not an integer ≥ 0', async () => {
    const gate = await fakeGate('deploy-a');
    const subject = checks(0);
    await subject.check(gate.url, 'deploy-a', signal());
    await subject.check(gate.url, 'deploy-a', signal());
    expect(gate.state.probes).toBe(2);
    expect(() => checks(-1)).toThrow(/GateChecks: ttlMillis must be an integer ≥ 0 \(milliseconds\), got -1/);
  });
});
