/**
 * The bearer tokens file (`LEASE_FENCE_TOKENS_FILE`): a JSON array of entries
 * `{ token, role: 'agent', holderId } | { token, role: 'gate', resources, gateId? } | { token, role: 'viewer' }`,
 * parsed with zod once at start-up. A bad file stops the start with a message naming the
 * entry and the field; token values are never echoed.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { BearerTokenSchema, IdSchema, ResourcePatternSchema } from '@lease-fence/protocol';
import { z } from 'zod';
import type { Principal } from './principal.js';
import { TokenRegistry } from './token-registry.js';

/** One entry of the tokens file. */
export const TokenEntrySchema = z.discriminatedUnion('role', [
  z.strictObject({ token: BearerTokenSchema, role: z.literal('agent'), holderId: IdSchema }),
  z.strictObject({
    token: BearerTokenSchema,
    role: z.literal('gate'),
    resources: z.array(ResourcePatternSchema).min(1, 'must list at least one resource'),
    gateId: IdSchema.optional(),
  }),
  z.strictObject({ token: BearerTokenSchema, role: z.literal('viewer') }),
]);
/** One parsed entry of the tokens file. */
export type TokenEntry = z.infer<typeof TokenEntrySchema>;

/** The whole tokens file. */
export const TokensFileSchema = z.array(TokenEntrySchema);

/**
 * Thrown when the tokens file is missing, is not JSON, or has a bad entry. The message names the
 * file, the entry (0-based index) and the field.
 */
export class TokensFileError extends Error {
  /** Stable error code. */
  readonly code = 'invalid-tokens-file';

  /** @param file - Path of the tokens file. @param problems - One line per problem. */
  constructor(
    readonly file: string,
    readonly problems: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(`tokens file ${file} (LEASE_FENCE_TOKENS_FILE): ${problems.join('; ')}`, options);
    this.name = 'TokensFileError';
  }
}

const describePath = (path: readonly PropertyKey[]): string => {
  const [index, field, ...rest] = path;
  if (index === undefined) return 'the file';
  const where = `entry ${String(index)}`;
  if (field === undefined) return where;
  return `${where} field ${[field, ...rest].map(String).join('.')}`;
};

/**
 * Default `gateId` of a gate entry without one: `gate-` and the first 12 hex digits of the
 * token's SHA-256, stable across restarts and reorderings, and not the token itself.
 */
const defaultGateId = (token: string): string =>
  `gate-${createHash('sha256').update(token).digest('hex').slice(0, 12)}`;

/**
 * Parses the text of a tokens file into a {@link TokenRegistry}.
 * @param file - Path, for messages.
 * @param text - The file's content.
 * @throws {@link TokensFileError} on malformed JSON, a bad entry, or a token listed twice.
 */
export function parseTokensFile(file: string, text: string): TokenRegistry {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new TokensFileError(file, [`is not valid JSON (${(error as Error).message})`], { cause: error });
  }
  const parsed = TokensFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new TokensFileError(
      file,
      parsed.error.issues.map((issue) => {
        const keys = issue.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')})` : '';
        return `${describePath(issue.path)}: ${issue.message}${keys}`;
      }),
    );
  }
  const principals = new Map<string, Principal>();
  const problems: string[] = [];
  parsed.data.forEach((entry, index) => {
    if (principals.has(entry.token)) {
      problems.push(`entry ${index} field token: repeats the token of an earlier entry`);
      return;
    }
    principals.set(entry.token, toPrincipal(entry));
  });
  if (problems.length > 0) throw new TokensFileError(file, problems);
  return new TokenRegistry(principals);
}

const toPrincipal = (entry: TokenEntry): Principal => {
  switch (entry.role) {
    case 'agent':
      return { role: 'agent', holderId: entry.holderId };
    case 'gate':
      return { role: 'gate', gateId: entry.gateId ?? defaultGateId(entry.token), resources: entry.resources };
    case 'viewer':
      return { role: 'viewer' };
  }
};

/** How to get a tokens file, for the message when there is none. */
const HOW_TO_CREATE =
  '`npm start` (or `npm run coordinator`) creates one with random tokens; or write a JSON array such as ' +
  '[{"token":"<secret>","role":"agent","holderId":"agent-a"},{"token":"<secret>","role":"gate","resources":["deploy-*"]},{"token":"<secret>","role":"viewer"}] ' +
  'there, or point LEASE_FENCE_TOKENS_FILE at one';

/**
 * Reads and parses the tokens file.
 * @throws {@link TokensFileError} when it cannot be read or is invalid.
 */
export async function loadTokensFile(file: string): Promise<TokenRegistry> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'does not exist'
        : `cannot be read (${(error as Error).message})`;
    throw new TokensFileError(file, [`${reason}; ${HOW_TO_CREATE}`], { cause: error });
  }
  return parseTokensFile(file, text);
}
