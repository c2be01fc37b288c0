/**
 * The gates panel's rows ("are the gates healthy?"): one per gate and resource, from the
 * coordinator's `GET /v1/gates` (the gates' latest reported status, kept in its memory) joined
 * with the seq gaps the log recorded (`RejectionsMissing`, folded into the view state).
 */
import type { GatesReply } from '@lease-fence/protocol';
import type { MissingRejectionsView } from './view-state.js';

/**
 * A gate whose last report is older than this (milliseconds of coordinator time) is marked stale:
 * gates report every 5 s by default (`LEASE_FENCE_GATE_STATUS_REPORT_MILLIS`), so three missed reports.
 */
export const GATE_STALE_AFTER_MILLIS = 15_000;

/** One row of the gates panel. */
export interface GateRow {
  readonly gateId: string;
  readonly resource: string;
  /** The gate's floor (the holder and fence it admits now); undefined before its first write or admit. */
  readonly floor: { readonly holderId: string; readonly fence: number } | undefined;
  /** Refusals durable in the gate's outbox, not yet acknowledged by the coordinator. */
  readonly outboxBacklog: number;
  /** Stale or double-granted fences the gate refused, ever (its last refusal seq). */
  readonly refusals: number;
  /** Invalid tokens refused since the gate process started. */
  readonly invalidTokens: number;
  /** `RejectionsMissing` events of this gate and resource in the log: reports lost before they reached it. */
  readonly seqGaps: number;
  /** Refusal seqs those gaps cover, in all. */
  readonly missingRefusals: number;
  /** Milliseconds since the coordinator last heard from the gate about this resource (≥ 0). */
  readonly lastContactAgoMillis: number;
  /** Whether {@link lastContactAgoMillis} exceeds the stale threshold. */
  readonly stale: boolean;
}

/**
 * The panel's rows, by gate id then resource.
 * @param reply - `GET /v1/gates`; its `nowMillis` (coordinator wall clock) ages each report.
 * @param missing - The view state's `missingRejections`.
 * @param staleAfterMillis - See {@link GATE_STALE_AFTER_MILLIS}.
 */
export function gateRows(
  reply: GatesReply,
  missing: readonly MissingRejectionsView[],
  staleAfterMillis: number = GATE_STALE_AFTER_MILLIS,
): GateRow[] {
  const gaps = new Map<string, { events: number; seqs: number }>();
  for (const gap of missing) {
    const key = `${gap.gateId}\u0000${gap.resource}`;
    const sum = gaps.get(key) ?? { events: 0, seqs: 0 };
    gaps.set(key, { events: sum.events + 1, seqs: sum.seqs + (gap.throughSeq - gap.fromSeq + 1) });
  }
  return reply.gates.flatMap((gate) =>
    gate.resources.map((entry): GateRow => {
      const gap = gaps.get(`${gate.gateId}\u0000${entry.resource}`);
      const lastContactAgoMillis = Math.max(0, reply.nowMillis - entry.lastContactMillis);
      return {
        gateId: gate.gateId,
        resource: entry.resource,
        floor: entry.floor ?? undefined,
        outboxBacklog: entry.outboxBacklog,
        refusals: entry.refusals,
        invalidTokens: entry.invalidTokens,
        seqGaps: gap?.events ?? 0,
        missingRefusals: gap?.seqs ?? 0,
        lastContactAgoMillis,
        stale: lastContactAgoMillis > staleAfterMillis,
      };
    }),
  );
}

/** "3 s ago", "2 min ago", "1 h ago"; under a second: "just now". */
export function formatAgo(millis: number): string {
  if (!Number.isFinite(millis) || millis < 1_000) return 'just now';
  if (millis < 60_000) return `${Math.floor(millis / 1_000)} s ago`;
  if (millis < 3_600_000) return `${Math.floor(millis / 60_000)} min ago`;
  return `${Math.floor(millis / 3_600_000)} h ago`;
}
