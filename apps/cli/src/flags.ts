/**
 * Checking a command's own flags and arguments with zod, so a bad value is a {@link UsageError}
 * (exit 64) that names the flag, before anything is sent.
 */
import { IdSchema } from '@lease-fence/protocol';
import { z } from 'zod';
import { DurationMillisSchema } from './duration.js';
import { UsageError } from './exit-codes.js';

/**
 * Parses `value` with `schema`.
 *
 * @param name - The flag or argument, as the user typed it (`--ttl`, `<position>`).
 * @throws {@link UsageError} `<name>: <what is wrong>` when `value` does not parse.
 */
export function parseFlag<T>(schema: z.ZodType<T>, name: string, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new UsageError(`${name}: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`);
}

/** A duration flag (`500ms`, `30s`, `2m`, `1h`) in milliseconds. @throws {@link UsageError} naming `name`. */
export const durationFlag = (name: string, value: unknown): number => parseFlag(DurationMillisSchema, name, value);

/** A resource id, as the coordinator accepts it. @throws {@link UsageError} naming `name`. */
export const resourceFlag = (name: string, value: unknown): string => parseFlag(IdSchema, name, value);

/** A log position: a whole number ≥ 1 in decimal digits. */
export const PositionSchema = z
  .string()
  .regex(/^\d{1,15}$/, 'must be a log position: a whole number in decimal digits')
  .transform(Number)
  .refine((position) => position >= 1, 'must be a log position: 1 or more');

/** A position flag or argument. @throws {@link UsageError} naming `name`. */
export const positionFlag = (name: string, value: unknown): number => parseFlag(PositionSchema, name, value);
