/**
 * The principals of the probes: eight agents (`agent-0` … `agent-7`), a gate whose patterns cover
 * `deploy-*`, a gate that covers only `other-*`, and a viewer. These tokens exist only in tests.
 */
import type { TokenEntry } from '../../support/test-tokens.js';

/** The agents' holder ids, in order. */
export const PROBE_AGENT_IDS: readonly string[] = Array.from({ length: 8 }, (_, index) => `agent-${index}`);

/** One token per agent, indexed like {@link PROBE_AGENT_IDS}. */
export const PROBE_AGENT_TOKENS: readonly string[] = PROBE_AGENT_IDS.map((holderId) => `probe-${holderId}-token-7f3c`);

/** The gate in scope of `deploy-*` resources, the gate out of scope, and the viewer. */
export const PROBE_TOKENS = {
  gateInScope: 'probe-gate-in-scope-token-1d9e',
  gateOutOfScope: 'probe-gate-out-of-scope-token-5a2b',
  viewer: 'probe-viewer-token-c0e4',
} as const;

/** The tokens file entries for {@link startCoordinator}'s `tokens` option. */
export const PROBE_TOKEN_ENTRIES: readonly TokenEntry[] = [
  ...PROBE_AGENT_IDS.map((holderId, index): TokenEntry => ({
    token: PROBE_AGENT_TOKENS[index]!,
    role: 'agent',
    holderId,
  })),
  { token: PROBE_TOKENS.gateInScope, role: 'gate', resources: ['deploy-*'], gateId: 'gate-in-scope' },
  { token: PROBE_TOKENS.gateOutOfScope, role: 'gate', resources: ['other-*'], gateId: 'gate-out-of-scope' },
  { token: PROBE_TOKENS.viewer, role: 'viewer' },
];
