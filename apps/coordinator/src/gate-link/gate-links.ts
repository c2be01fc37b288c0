/**
 * The coordinator's side of fence-first handover: the gate links that are open, which resources
 * each guards, and the admit requests waiting for a gate's answer. It implements
 * coordinator-core's `FenceFirstOptions.admit` port: ask every link guarding the resource (and
 * any that starts guarding it while the request waits), resolve with the first gate that answers
 * `admitted`, or `undefined` at the timeout.
 *
 * Transport-free: the gateway (./gate-link.gateway.ts) feeds it text frames and gives it a way to
 * send; the tests drive it directly.
 */
import { Injectable } from '@nestjs/common';
import type { FenceAdmitRequest } from '@lease-fence/coordinator-core';
import { type CoordinatorToGateFrame, GateToCoordinatorFrameSchema } from '@lease-fence/protocol';
import { gateCovers, type GatePrincipal } from '../auth/principal.js';
import type { GateStatuses } from './gate-statuses.js';

/** One open link, as the registry sees it: who is at the other end and how to send to it. */
export interface GateLinkPeer {
  readonly gate: GatePrincipal;
  send(frame: CoordinatorToGateFrame): void;
}

/** What {@link GateLinks.attach} returns: feed it the link's frames, and tell it when the link closed. */
export interface GateLinkHandle {
  /** Handles one text frame from the gate; answers an `error` frame for anything it cannot accept (nothing changes). */
  receive(text: string): void;
  /** The link closed: it is no longer asked. */
  detach(): void;
}

interface Link {
  readonly peer: GateLinkPeer;
  guarded: ReadonlySet<string>;
  /** Admit requests sent on this link, by id, still waiting. */
  readonly asked: Map<number, Waiting>;
}

interface Waiting {
  readonly request: FenceAdmitRequest;
  settle(answer: { readonly gateId: string } | undefined): void;
  /** The id of this request on each link it was sent on. */
  readonly ids: Map<Link, number>;
}

/** Timers, injectable for tests. */
export interface GateLinksTimers {
  /** Runs `run` after `delayMillis`; returns a cancel function. */
  schedule(delayMillis: number, run: () => void): () => void;
}

const realTimers: GateLinksTimers = {
  schedule(delayMillis, run) {
    const timer = setTimeout(run, delayMillis);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** The open gate links and the admit requests in flight. */
@Injectable()
export class GateLinks {
  private readonly links = new Set<Link>();
  private readonly waiting = new Set<Waiting>();
  private nextId = 1;

  constructor(
    private readonly timers: GateLinksTimers = realTimers,
    /** Where `status` frames go; absent: they are refused. */
    private readonly statuses?: GateStatuses,
  ) {}

  /** Open links, for tests and diagnostics. */
  get size(): number {
    return this.links.size;
  }

  /** Registers a new link; it guards nothing until its `guard` frame. */
  attach(peer: GateLinkPeer): GateLinkHandle {
    const link: Link = { peer, guarded: new Set(), asked: new Map() };
    this.links.add(link);
    return {
      receive: (text) => this.receive(link, text),
      detach: () => {
        this.links.delete(link);
        for (const waiting of link.asked.values()) waiting.ids.delete(link);
        link.asked.clear();
      },
    };
  }

  /**
   * Asks every link guarding `request.resource` to admit `request.fence`; links that start
   * guarding it while the request waits are asked too.
   * @returns the gate id of the first link to answer `admitted`, or `undefined` after
   *   `request.timeoutMillis` milliseconds without one.
   */
  admit(request: FenceAdmitRequest): Promise<{ readonly gateId: string } | undefined> {
    return new Promise((resolve) => {
      let cancel = (): void => undefined;
      const waiting: Waiting = {
        request,
        ids: new Map(),
        settle: (answer) => {
          if (!this.waiting.delete(waiting)) return;
          cancel();
          for (const [link, id] of waiting.ids) link.asked.delete(id);
          waiting.ids.clear();
          resolve(answer);
        },
      };
      this.waiting.add(waiting);
      cancel = this.timers.schedule(request.timeoutMillis, () => waiting.settle(undefined));
      for (const link of this.links) if (link.guarded.has(request.resource)) this.ask(link, waiting);
    });
  }

  private ask(link: Link, waiting: Waiting): void {
    if (waiting.ids.has(link)) return;
    const id = this.nextId;
    this.nextId += 1;
    waiting.ids.set(link, id);
    link.asked.set(id, waiting);
    const { resource, holderId, fence } = waiting.request;
    link.peer.send({ type: 'admit', id, resource, holderId, fence });
  }

  private receive(link: Link, text: string): void {
    const refuse = (field: string, message: string): void => link.peer.send({ type: 'error', field, message });
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      refuse('', 'a frame must be a JSON object { type: "guard" | "admitted" | "status", ... }');
      return;
    }
    const parsed = GateToCoordinatorFrameSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue?.path.map(String).join('.') ?? '';
      refuse(field, `${field === '' ? 'frame' : field}: ${issue?.message ?? 'is malformed'}`);
      return;
    }
    const frame = parsed.data;
    if (frame.type === 'status') {
      const { type: _type, ...status } = frame;
      const refused =
        this.statuses === undefined
          ? { kind: 'invalid', field: 'type', message: 'this coordinator keeps no gate statuses; nothing kept' }
          : this.statuses.record(link.peer.gate, status);
      if (refused !== undefined) refuse(refused.field, refused.message);
      return;
    }
    if (frame.type === 'guard') {
      const resources = [...new Set(frame.resources)];
      const outside = resources.findIndex((resource) => !gateCovers(link.peer.gate, resource));
      if (outside >= 0) {
        refuse(
          `resources.${frame.resources.indexOf(resources[outside]!)}`,
          `gate ${link.peer.gate.gateId} may not guard ${JSON.stringify(resources[outside])}: its token covers ${link.peer.gate.resources.join(', ')}; nothing changed`,
        );
        return;
      }
      link.guarded = new Set(resources);
      link.peer.send({ type: 'guarding', resources });
      for (const waiting of this.waiting) if (link.guarded.has(waiting.request.resource)) this.ask(link, waiting);
      return;
    }
    if (!link.guarded.has(frame.resource)) {
      refuse(
        'resource',
        `this link does not guard ${JSON.stringify(frame.resource)} (it guards ${[...link.guarded].map((r) => JSON.stringify(r)).join(', ') || 'nothing yet'}); send guard first; nothing changed`,
      );
      return;
    }
    const waiting = link.asked.get(frame.id);
    if (waiting === undefined) {
      refuse(
        'id',
        `no admit request #${frame.id} is waiting on this link (answered, timed out, or never sent); nothing changed`,
      );
      return;
    }
    const { resource, fence } = waiting.request;
    if (frame.resource !== resource || frame.fence !== fence) {
      refuse(
        frame.resource !== resource ? 'resource' : 'fence',
        `admit request #${frame.id} asked for fence ${fence} on ${JSON.stringify(resource)}, not fence ${frame.fence} on ${JSON.stringify(frame.resource)}; nothing changed`,
      );
      return;
    }
    waiting.settle({ gateId: link.peer.gate.gateId });
  }
}
