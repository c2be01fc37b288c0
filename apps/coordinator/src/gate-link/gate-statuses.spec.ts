import type { GateStatusBody } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import type { GatePrincipal } from '../auth/principal.js';
import { GateLinks } from './gate-links.js';
import { GateStatuses, MAX_GATE_STATUS_ENTRIES } from './gate-statuses.js';

const gate = (gateId: string, resources: string[] = ['deploy-*']): GatePrincipal => ({
  role: 'gate',
  gateId,
  resources,
});

const status = (resource: string, overrides: Partial<GateStatusBody['resources'][number]> = {}): GateStatusBody => ({
  resources: [
    {
      resource,
      floor: { holderId: 'agent-1', fence: 4 },
      outboxBacklog: 1,
      refusals: 2,
      invalidTokens: 3,
      ...overrides,
    },
  ],
  reportedAtMillis: 500,
});

/** A clock the test sets. */
function clock(start: number) {
  let now = start;
  return { now: () => now, set: (millis: number) => (now = millis) };
}

describe('GateStatuses', () => {
  it('keeps the latest report per gate and resource, stamped with the coordinator time of its arrival', () => {
    const time = clock(1000);
    const statuses = new GateStatuses(time.now);
    statuses.record(gate('gate-a'), status('deploy-a', { refusals: 1 }));
    time.set(2000);
    statuses.record(gate('gate-b'), status('deploy-b'));
    time.set(3000);
    statuses.record(gate('gate-a'), status('deploy-a', { refusals: 5 }));

    const listed = statuses.list();

    expect(listed.nowMillis).toBe(3000);
    expect(listed.gates).toEqual([
      {
        gateId: 'gate-a',
        lastContactMillis: 3000,
        resources: [
          {
            resource: 'deploy-a',
            floor: { holderId: 'agent-1', fence: 4 },
            outboxBacklog: 1,
            refusals: 5,
            invalidTokens: 3,
            reportedAtMillis: 500,
            lastContactMillis: 3000,
          },
        ],
      },
      expect.objectContaining({ gateId: 'gate-b', lastContactMillis: 2000 }),
    ]);
  });

  it('groups the resources of one gate id reported by separate processes, each with its own last contact', () => {
    const time = clock(1000);
    const statuses = new GateStatuses(time.now);
    statuses.record(gate('deploy-gate'), status('deploy-b'));
    time.set(4000);
    statuses.record(gate('deploy-gate'), status('deploy-a'));

    const [only] = statuses.list().gates;

    expect(only?.lastContactMillis).toBe(4000);
    expect(only?.resources.map(({ resource, lastContactMillis }) => [resource, lastContactMillis])).toEqual([
      ['deploy-a', 4000],
      ['deploy-b', 1000],
    ]);
  });

  it('refuses a whole report naming a resource outside the token, or one twice, and keeps nothing of it', () => {
    const statuses = new GateStatuses(() => 1000);
    const outside: GateStatusBody = {
      resources: [...status('deploy-a').resources, ...status('billing').resources],
      reportedAtMillis: 1,
    };
    const twice: GateStatusBody = {
      resources: [...status('deploy-a').resources, ...status('deploy-a').resources],
      reportedAtMillis: 1,
    };

    expect(statuses.record(gate('gate-a'), outside)).toEqual({
      kind: 'forbidden',
      field: 'resources.1.resource',
      message: expect.stringContaining('may not report "billing"'),
    });
    expect(statuses.record(gate('gate-a'), twice)).toEqual({
      kind: 'invalid',
      field: 'resources.1.resource',
      message: expect.stringContaining('twice'),
    });
    expect(statuses.list().gates).toEqual([]);
  });

  it(`keeps at most ${MAX_GATE_STATUS_ENTRIES} entries, dropping the least recently reported`, () => {
    const statuses = new GateStatuses(() => 1000);
    for (let index = 0; index <= MAX_GATE_STATUS_ENTRIES; index += 1)
      statuses.record(gate('g'), status(`deploy-${index}`));

    const resources = statuses.list().gates[0]!.resources.map((entry) => entry.resource);

    expect(resources).toHaveLength(MAX_GATE_STATUS_ENTRIES);
    expect(resources).not.toContain('deploy-0');
    expect(resources).toContain(`deploy-${MAX_GATE_STATUS_ENTRIES}`);
  });
});

describe('GateLinks with status frames', () => {
  it('keeps a status frame of the link, and answers an error frame naming the field for a foreign resource', () => {
    const statuses = new GateStatuses(() => 7000);
    const links = new GateLinks(undefined, statuses);
    const sent: unknown[] = [];
    const handle = links.attach({ gate: gate('gate-a'), send: (frame) => sent.push(frame) });

    handle.receive(JSON.stringify({ type: 'status', ...status('deploy-a') }));
    handle.receive(JSON.stringify({ type: 'status', ...status('billing') }));

    expect(
      statuses.list().gates.map((g) => [g.gateId, g.resources.map((r) => r.resource), g.lastContactMillis]),
    ).toEqual([['gate-a', ['deploy-a'], 7000]]);
    expect(sent).toEqual([
      { type: 'error', field: 'resources.0.resource', message: expect.stringContaining('billing') },
    ]);
  });
});
