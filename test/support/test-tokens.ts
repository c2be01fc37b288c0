/**
 * A tokens file for tests (`LEASE_FENCE_TOKENS_FILE`): two agents, a gate, a viewer.
 * These tokens exist only in tests.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One entry of the coordinator's tokens file. */
export type TokenEntry =
  | { readonly token: string; readonly role: 'agent'; readonly holderId: string }
  | { readonly token: string; readonly role: 'gate'; readonly resources: readonly string[]; readonly gateId?: string }
  | { readonly token: string; readonly role: 'viewer' };

/** The default test principals. The gate covers `deploy-*` and `db`. */
export const TEST_TOKENS = {
  agentA: { token: 'test-agent-a-3b9f0c2d7e', role: 'agent', holderId: 'agent-a' },
  agentB: { token: 'test-agent-b-8d1e4a6f20', role: 'agent', holderId: 'agent-b' },
  gate: { token: 'test-gate-5c7a9e1b34', role: 'gate', resources: ['deploy-*', 'db'], gateId: 'gate-1' },
  viewer: { token: 'test-viewer-2f6d8b0a91', role: 'viewer' },
} as const satisfies Record<string, TokenEntry>;

/** Writes `entries` (default: {@link TEST_TOKENS}) as `tokens.json` in `dir` and returns its path. */
export async function writeTokensFile(
  dir: string,
  entries: readonly TokenEntry[] = Object.values(TEST_TOKENS),
): Promise<string> {
  const file = join(dir, 'tokens.json');
  await writeFile(file, JSON.stringify(entries, null, 2));
  return file;
}
