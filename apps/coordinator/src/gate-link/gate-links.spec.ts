import type { CoordinatorToGateFrame } from '@lease-fence/protocol';
import { describe, expect, it } from 'vitest';
import type { GatePrincipal } from '../auth/principal.js';
import { GateLinks, type GateLinksTimers } from './gate-links.js';

/** Timers the test fires by hand. */
function manualTimers() {
  const due: { delayMillis: number; run: () => void; cancelled: boolean }[] = [];
  const timers: GateLinksTimers = {
    schedule(delayMillis, run) {
      const entry = { delayMillis, run, cancelled: false };
      due.push(entry);
      return () => {
        entry.cancelled = true;
      };
    },
  };
  const fireAll = (): void => {
    for (const entry of due.splice(0)) if (!entry.cancelled) entry.run();
  };
  return { timers, fireAll };
}

const gate = (gateId: string, resources: string[] = ['deploy-*']): GatePrincipal => ({
  role: 'gate',
  gateId,
  resources,
});

function link(links: GateLinks, principal: GatePrincipal) {
  const sent: CoordinatorToGateFrame[] = [];
  const handle = links.attach({ gate: principal, send: (frame) => sent.push(frame) });
  const send = (frame: unknown): void => handle.receive(typeof frame === 'string' ? frame : JSON.stringify(frame));
  return { sent, send, handle };
}

const request = { resource: 'deploy-slot', holderId: 'agent-b', fence: 7, requestId: 'b-1', timeoutMillis: 2000 };

describe('GateLinks', () => {
  it('asks the links guarding the resource and resolves with the first gate that admits', async () => {
    const { timers } = manualTimers();
    const links = new GateLinks(timers);
    const a = link(links, gate('gate-a'));
    const other = link(links, gate('gate-o', ['*']));
    a.send({ type: 'guard', resources: ['deploy-slot'] });
    other.send({ type: 'guard', resources: ['other-slot'] });
    expect(a.sent).toEqual([{ type: 'guarding', resources: ['deploy-slot'] }]);

    const answer = links.admit(request);
    expect(a.sent[1]).toEqual({ type: 'admit', id: 1, resource: 'deploy-slot', holderId: 'agent-b', fence: 7 });
    expect(other.sent).toHaveLength(1);
    a.send({ type: 'admitted', id: 1, resource: 'deploy-slot', fence: 7 });
    expect(await answer).toEqual({ gateId: 'gate-a' });
  });

  it('asks a link that starts guarding the resource while the request waits', async () => {
    const { timers } = manualTimers();
    const links = new GateLinks(timers);
    const answer = links.admit(request);
    const late = link(links, gate('gate-late'));
    late.send({ type: 'guard', resources: ['deploy-slot'] });
    expect(late.sent.at(-1)).toMatchObject({ type: 'admit', fence: 7 });
    late.send({ type: 'admitted', id: (late.sent.at(-1) as { id: number }).id, resource: 'deploy-slot', fence: 7 });
    expect(await answer).toEqual({ gateId: 'gate-late' });
  });

  it('resolves undefined at the timeout when no gate answers, and a late answer is refused', async () => {
    const { timers, fireAll } = manualTimers();
    const links = new GateLinks(timers);
    const a = link(links, gate('gate-a'));
    a.send({ type: 'guard', resources: ['deploy-slot'] });
    const answer = links.admit(request);
    fireAll();
    expect(await answer).toBeUndefined();
    a.send({ type: 'admitted', id: 1, resource: 'deploy-slot', fence: 7 });
    expect(a.sent.at(-1)).toMatchObject({ type: 'error', field: 'id' });
  });

  it.each([
    ['a frame that is not JSON', 'not json', ''],
    ['an unknown frame type', { type: 'hello' }, 'type'],
    ['a guard outside the token patterns', { type: 'guard', resources: ['deploy-slot', 'db-primary'] }, 'resources.1'],
    [
      'an admitted for a resource this link does not guard',
      { type: 'admitted', id: 1, resource: 'deploy-other', fence: 7 },
      'resource',
    ],
    [
      'an admitted for a fence it was not asked',
      { type: 'admitted', id: 1, resource: 'deploy-slot', fence: 8 },
      'fence',
    ],
    ['an admitted for a request never sent', { type: 'admitted', id: 99, resource: 'deploy-slot', fence: 7 }, 'id'],
    [
      'an admitted with a fence that is not a positive integer',
      { type: 'admitted', id: 1, resource: 'deploy-slot', fence: -1 },
      'fence',
    ],
  ])('refuses %s with an error naming the field, and changes nothing', async (_what, frame, field) => {
    const { timers, fireAll } = manualTimers();
    const links = new GateLinks(timers);
    const a = link(links, gate('gate-a'));
    a.send({ type: 'guard', resources: ['deploy-slot'] });
    const answer = links.admit(request);
    a.send(frame);
    expect(a.sent.at(-1)).toMatchObject({ type: 'error', field });
    // Nothing changed: the request still waits for fence 7 on this link, and only the right answer settles it.
    a.send({ type: 'admitted', id: 1, resource: 'deploy-slot', fence: 7 });
    fireAll();
    expect(await answer).toEqual({ gateId: 'gate-a' });
  });

  it('stops asking a link once it is detached', async () => {
    const { timers, fireAll } = manualTimers();
    const links = new GateLinks(timers);
    const a = link(links, gate('gate-a'));
    a.send({ type: 'guard', resources: ['deploy-slot'] });
    a.handle.detach();
    const answer = links.admit(request);
    expect(a.sent).toHaveLength(1);
    fireAll();
    expect(await answer).toBeUndefined();
    expect(links.size).toBe(0);
  });
});
