/**
 * The latest status each gate reported (over its gate link or `POST /v1/gates/status`), per
 * (gate id, resource), with the coordinator's time of that report ("last contact"). Observation,
 * not a fact of the log: kept in memory only, never appended, forgotten at a restart until the
 * gate's next report. Served by `GET /v1/gates`.
 */
import { Injectable } from '@nestjs/common';
import type { GateResourceStatus, GatesReply, GateStatusBody, WireGate } from '@lease-fence/protocol';
import { gateCovers, type GatePrincipal } from '../auth/principal.js';

/**
 * Most (gate, resource) entries kept: a gate token's pattern may cover any number of resources,
 * so the least recently reported entry is dropped past this many.
 */
export const MAX_GATE_STATUS_ENTRIES = 4096;

/** One kept entry: a resource's last report from one gate. */
interface Entry extends GateResourceStatus {
  readonly gateId: string;
  readonly reportedAtMillis: number;
  readonly lastContactMillis: number;
}

/**
 * Why a report was refused: the offending field (dotted, as in the body) and what is wrong;
 * `forbidden` when it names a resource outside the gate token's patterns (403 over HTTP, like
 * every gate report), `invalid` otherwise (400). Nothing was kept.
 */
export interface GateStatusRefusal {
  readonly kind: 'forbidden' | 'invalid';
  readonly field: string;
  readonly message: string;
}

/** The gates' latest statuses. */
@Injectable()
export class GateStatuses {
  /** By `gateId` + NUL + `resource`, least recently reported first (Map keeps insertion order). */
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Keeps `status` as `gate`'s latest for each of its resources, stamped with the coordinator's
   * wall clock. All or nothing: a resource outside the gate token's patterns, or named twice,
   * refuses the whole report.
   * @returns `undefined` when kept, otherwise the refusal naming the field.
   */
  record(gate: GatePrincipal, status: GateStatusBody): GateStatusRefusal | undefined {
    const seen = new Set<string>();
    for (const [index, { resource }] of status.resources.entries()) {
      if (!gateCovers(gate, resource)) {
        return {
          kind: 'forbidden',
          field: `resources.${index}.resource`,
          message: `gate ${gate.gateId} may not report ${JSON.stringify(resource)}: its token covers ${gate.resources.join(', ')}; nothing kept`,
        };
      }
      if (seen.has(resource))
        return {
          kind: 'invalid',
          field: `resources.${index}.resource`,
          message: `names ${JSON.stringify(resource)} twice; nothing kept`,
        };
      seen.add(resource);
    }
    const lastContactMillis = this.now();
    for (const resourceStatus of status.resources) {
      const key = `${gate.gateId}\u0000${resourceStatus.resource}`;
      this.entries.delete(key);
      this.entries.set(key, {
        ...resourceStatus,
        gateId: gate.gateId,
        reportedAtMillis: status.reportedAtMillis,
        lastContactMillis,
      });
    }
    for (const key of this.entries.keys()) {
      if (this.entries.size <= MAX_GATE_STATUS_ENTRIES) break;
      this.entries.delete(key);
    }
    return undefined;
  }

  /** Every gate that reported since this process started, by gate id, resources by name. */
  list(): GatesReply {
    const gates = new Map<string, WireGate & { resources: WireGate['resources'][number][] }>();
    for (const { gateId, ...entry } of this.entries.values()) {
      const gate = gates.get(gateId) ?? { gateId, lastContactMillis: 0, resources: [] };
      gate.resources.push(entry);
      gates.set(gateId, { ...gate, lastContactMillis: Math.max(gate.lastContactMillis, entry.lastContactMillis) });
    }
    const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
    return {
      nowMillis: this.now(),
      gates: [...gates.values()]
        .map((gate) => ({ ...gate, resources: gate.resources.sort((a, b) => byName(a.resource, b.resource)) }))
        .sort((a, b) => byName(a.gateId, b.gateId)),
    };
  }
}
