/**
 * Edge checks of lease requests that the protocol schemas cannot know: the `:resource` path
 * parameter and the configured TTL bounds. Each failure names the field and changes nothing.
 */
import { IdSchema } from '@lease-fence/protocol';
import { isTtlMillis } from 'lease-fence';
import { z } from 'zod';
import type { Config } from '../config/config.js';
import { InvalidRequestError, parseInput } from '../http/invalid-request.error.js';

const ResourceParamsSchema = z.object({ resource: IdSchema });

/**
 * The `:resource` path parameter, checked like every id (1–200 printable characters).
 * @throws {@link InvalidRequestError} naming `resource`.
 */
export function parseResource(resource: string | undefined): string {
  return parseInput(ResourceParamsSchema, { resource }, 'params').resource;
}

/**
 * Checks a requested TTL against the configured bounds (an absent TTL means the default), by
 * lease-fence's TTL rule (`isTtlMillis`, the one copy). The protocol schema has already checked it
 * is a positive whole number, of any size: a huge one (`1e20`, or `9007199254740993`, which JSON
 * turns into 2^53) is refused here, as out of range.
 * @throws {@link InvalidRequestError} naming `ttlMillis`, the bounds and the value.
 */
export function checkTtlMillis(
  ttlMillis: number | undefined,
  config: Pick<Config, 'minTtlMillis' | 'maxTtlMillis'>,
): void {
  if (ttlMillis === undefined || isTtlMillis(ttlMillis, config)) return;
  throw new InvalidRequestError([
    {
      path: 'ttlMillis',
      message: `is out of range: must be between ${config.minTtlMillis} and ${config.maxTtlMillis} milliseconds (the coordinator's configured bounds), got ${ttlMillis}`,
    },
  ]);
}
