/**
 * Resource patterns: a resource name, or a prefix followed by one trailing `*`. Gate tokens use
 * them to say which resources a gate may report for, and `LEASE_FENCE_LOCK_DELAY` to say which
 * resources a lock-delay applies to. The one copy of the syntax and of the match rule.
 */
import { z } from 'zod';
import { IdSchema, MAX_ID_LENGTH } from './events.js';

/**
 * A resource name (an {@link IdSchema} id), or a prefix of one followed by one trailing `*`
 * (`deploy-*`); `*` alone covers every resource. At most `MAX_ID_LENGTH + 1` characters.
 */
export const ResourcePatternSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_ID_LENGTH + 1, `must be at most ${MAX_ID_LENGTH + 1} characters`)
  .refine((p) => !p.slice(0, -1).includes('*'), 'may contain `*` only as its last character')
  .refine(
    (p) => p === '*' || IdSchema.safeParse(p.endsWith('*') ? p.slice(0, -1) : p).success,
    'must be a resource id, optionally followed by `*`',
  );

/**
 * Whether `pattern` covers `resource`: equal, or `pattern` ends in `*` and `resource` starts with
 * what precedes it (`*` alone covers every resource). Case-sensitive, like resource names.
 * @param pattern - A pattern as {@link ResourcePatternSchema} accepts it.
 * @param resource - A resource name.
 */
export function resourceMatches(pattern: string, resource: string): boolean {
  return pattern.endsWith('*') ? resource.startsWith(pattern.slice(0, -1)) : pattern === resource;
}
