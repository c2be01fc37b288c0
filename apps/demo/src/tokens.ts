/**
 * Reads the coordinator's tokens file (`LEASE_FENCE_TOKENS_FILE`): the demo's agents use the
 * agent tokens, the gate sidecars of its deploy slots the gate token.
 */
import { readFile } from 'node:fs/promises';

/** An agent's credentials. */
export interface AgentToken {
  readonly token: string;
  readonly holderId: string;
}

/** A gate's credentials. */
export interface GateToken {
  readonly token: string;
  readonly gateId: string;
  readonly resources: readonly string[];
}

/** What the demo needs from the tokens file. */
export interface DemoTokens {
  readonly agents: readonly AgentToken[];
  readonly gate: GateToken;
}

/**
 * Reads and checks the tokens file.
 * @throws Error naming the file when it is not a JSON array, has no agent token, or no gate token.
 */
export const readDemoTokens = async (path: string): Promise<DemoTokens> => {
  const entries: unknown = JSON.parse(await readFile(path, 'utf8'));
  if (!Array.isArray(entries)) throw new Error(`${path}: a tokens file is a JSON array of { token, role, … }`);
  const agents: AgentToken[] = [];
  let gate: GateToken | undefined;
  for (const entry of entries as Record<string, unknown>[]) {
    if (typeof entry?.['token'] !== 'string') continue;
    if (entry['role'] === 'agent' && typeof entry['holderId'] === 'string')
      agents.push({ token: entry['token'], holderId: entry['holderId'] });
    if (
      entry['role'] === 'gate' &&
      typeof entry['gateId'] === 'string' &&
      Array.isArray(entry['resources']) &&
      gate === undefined
    ) {
      gate = { token: entry['token'], gateId: entry['gateId'], resources: entry['resources'].map(String) };
    }
  }
  if (agents.length === 0) throw new Error(`${path}: no agent token ({ role: 'agent', holderId })`);
  if (gate === undefined) throw new Error(`${path}: no gate token ({ role: 'gate', gateId, resources })`);
  return { agents, gate };
};
