/**
 * Lock-delay rules (Chubby's lock-delay, Consul's session lock-delay): after a resource's holder
 * is lost uncleanly — its lease expired rather than being released, or a gate refused one of its
 * writes — the resource is not granted again for a configured delay, so that writes the lost
 * holder still has in flight drain before a new holder starts.
 *
 * This file resolves which delay applies to a resource. The delay itself is decided by the pure
 * decider (`decider/decide.ts`, from the loss instants `decider/evolve.ts` keeps in the state).
 */
import { ResourcePatternSchema, resourceMatches } from '@lease-fence/protocol';
import { isIntegerInRange, MAX_TTL_MILLIS } from 'lease-fence';

/** One lock-delay rule: resources `pattern` covers wait `millis` after an unclean loss before a new grant. */
export interface LockDelayRule {
  /** A resource name, or a prefix followed by `*` (`deploy-*`); `*` alone covers every resource. */
  readonly pattern: string;
  /** The delay in milliseconds. Integer in [0, `MAX_TTL_MILLIS`] (2^31 - 1); 0 = no delay. */
  readonly millis: number;
}

/** Names field `field` of rule `index` in messages: `lockDelays.0.millis` by default. */
export type LockDelayRuleNamer = (index: number, field: 'pattern' | 'millis') => string;

/**
 * Checks lock-delay rules: each pattern valid ({@link ResourcePatternSchema}) and listed once,
 * each delay an integer of milliseconds in [0, `MAX_TTL_MILLIS`].
 * @param api - Who is checking, named first in messages (e.g. `DurableCoordinator.open`).
 * @param nameOf - How messages name a rule's field. @defaultValue `lockDelays.<index>.<field>`
 * @returns the rules, copied.
 * @throws TypeError / RangeError naming the rule's field, what is wrong and the value.
 */
export function checkLockDelayRules(
  api: string,
  rules: unknown,
  nameOf: LockDelayRuleNamer = (index, field) => `lockDelays.${index}.${field}`,
): readonly LockDelayRule[] {
  if (!Array.isArray(rules))
    throw new TypeError(`${api}: lockDelays must be an array of { pattern, millis }, got ${String(rules)}`);
  const seen = new Set<string>();
  return rules.map((rule: unknown, index): LockDelayRule => {
    if (rule === null || typeof rule !== 'object')
      throw new TypeError(`${api}: lockDelays.${index} must be an object { pattern, millis }, got ${String(rule)}`);
    const { pattern, millis } = rule as { pattern?: unknown; millis?: unknown };
    const parsed = ResourcePatternSchema.safeParse(pattern);
    if (!parsed.success)
      throw new RangeError(
        `${api}: ${nameOf(index, 'pattern')} ${parsed.error.issues[0]?.message ?? 'is not a resource pattern'}, got ${JSON.stringify(pattern)}`,
      );
    if (seen.has(parsed.data))
      throw new RangeError(
        `${api}: ${nameOf(index, 'pattern')} ${JSON.stringify(parsed.data)} is listed twice; give each pattern one delay`,
      );
    seen.add(parsed.data);
    if (!isIntegerInRange(millis, 0, MAX_TTL_MILLIS)) {
      throw new RangeError(
        `${api}: ${nameOf(index, 'millis')} must be an integer of milliseconds in [0, ${MAX_TTL_MILLIS}], got ${String(millis)}`,
      );
    }
    return { pattern: parsed.data, millis };
  });
}

/**
 * The lock-delay of `resource`: the delay of the most specific rule that covers it — an exact
 * name before any prefix, a longer prefix before a shorter one, so the order of the rules does
 * not matter — or 0 when none does.
 * @param rules - Checked rules ({@link checkLockDelayRules}).
 * @returns milliseconds, ≥ 0.
 */
export function lockDelayMillisFor(rules: readonly LockDelayRule[], resource: string): number {
  let best: LockDelayRule | undefined;
  for (const rule of rules) {
    if (!resourceMatches(rule.pattern, resource)) continue;
    if (best === undefined || specificity(rule.pattern) > specificity(best.pattern)) best = rule;
  }
  return best?.millis ?? 0;
}

/** How specific a pattern is: an exact name beats every prefix; a longer prefix beats a shorter one. */
const specificity = (pattern: string): number => (pattern.endsWith('*') ? pattern.length - 1 : Number.MAX_SAFE_INTEGER);
