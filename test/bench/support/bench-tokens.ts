/**
 * Tokens for a benchmark run: `agents` agent tokens (holders `bench-agent-0`…), one viewer and one
 * gate (`bench-gate`, for `res-*`: the gate link of bench:service's fence-first mode), random per
 * run and written to a temp tokens file that the run removes.
 */
import { randomBytes } from 'node:crypto';
import type { TokenEntry } from '../../support/test-tokens.js';

/** The principals of one benchmark run. */
export interface BenchTokens {
  /** Every entry, as written to the tokens file (agents first, in order, then the viewer). */
  readonly entries: readonly TokenEntry[];
  /** Agent tokens in order: agent `i` holds as `bench-agent-i`. */
  readonly agents: readonly string[];
  readonly viewer: string;
  /** The gate token (gateId `bench-gate`, resources `res-*`, the workload's resource names). */
  readonly gate: string;
}

/** Creates `agents` agent tokens, one viewer token and one gate token. */
export function createBenchTokens(agents: number): BenchTokens {
  const secret = (): string => randomBytes(12).toString('hex');
  const agentEntries = Array.from({ length: agents }, (_, i) => ({
    token: `bench-agent-${i}-${secret()}`,
    role: 'agent' as const,
    holderId: `bench-agent-${i}`,
  }));
  const viewer = `bench-viewer-${secret()}`;
  const gate = `bench-gate-${secret()}`;
  return {
    entries: [
      ...agentEntries,
      { token: viewer, role: 'viewer' },
      { token: gate, role: 'gate', gateId: 'bench-gate', resources: ['res-*'] },
    ],
    agents: agentEntries.map((e) => e.token),
    viewer,
    gate,
  };
}
