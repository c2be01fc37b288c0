/**
 * zod helpers for parsing a process's environment variables, shared by the coordinator
 * (`apps/coordinator/src/config/config.ts`) and the gate sidecar (`apps/gate/src/config.ts`) so
 * both read the environment by the same conventions: an unset or blank variable takes its
 * default, a set one is trimmed and never replaced by the default when it is bad, and the error
 * names every offending variable. Each helper is a zod schema of one variable's raw string.
 */
import { MAX_ID_LENGTH } from 'lease-fence';
import { z } from 'zod';

/** pino log levels accepted in `LOG_LEVEL`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `true` when a variable is unset or blank (only whitespace): it takes its default. */
export const isUnset = (raw: string | undefined): raw is undefined => raw === undefined || raw.trim() === '';

/** A text variable: trimmed, or `fallback` when unset or blank. */
export const envText = (fallback: string) =>
  z
    .string()
    .optional()
    .transform((raw) => (isUnset(raw) ? fallback : raw.trim()));

/**
 * A required variable: trimmed; unset or blank is the issue `"is required: <what>"`.
 * @param what - What the variable holds, for the message.
 */
export const envRequired = (what: string) =>
  z.string({ error: `is required: ${what}` }).transform((raw, ctx) => {
    if (isUnset(raw)) {
      ctx.addIssue({ code: 'custom', message: `is required: ${what}` });
      return z.NEVER;
    }
    return raw.trim();
  });

/**
 * An integer variable in `[min, max]` written in decimal digits (an optional leading `+`), or
 * `fallback` when unset or blank. Otherwise the issue
 * `"must be an integer <unit> in [<min>, <max>], got <the value as set>"`.
 * @param unit - Follows "an integer" in the message: `'of milliseconds'`, `'(TCP port)'`, …
 * @param fallback - The default; `undefined` for a variable whose default is computed later.
 */
export const envInteger = <F extends number | undefined>(min: number, max: number, unit: string, fallback: F) =>
  z
    .string()
    .optional()
    .transform((raw, ctx): number | F => {
      if (isUnset(raw)) return fallback;
      const text = raw.trim();
      const value = /^\+?\d+$/.test(text) ? Number(text) : Number.NaN;
      if (!Number.isSafeInteger(value) || value < min || value > max) {
        ctx.addIssue({
          code: 'custom',
          message: `must be an integer ${unit} in [${min}, ${max}], got ${JSON.stringify(raw)}`,
        });
        return z.NEVER;
      }
      return value;
    });

/** `LOG_LEVEL`: one of {@link LOG_LEVELS}, case-insensitive; `fallback` when unset or blank. */
export const envLogLevel = (fallback: LogLevel) =>
  envText(fallback).transform((raw, ctx): LogLevel => {
    const level = LOG_LEVELS.find((l) => l === raw.toLowerCase());
    if (level !== undefined) return level;
    ctx.addIssue({ code: 'custom', message: `must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(raw)}` });
    return z.NEVER;
  });

/**
 * `LEASE_FENCE_NAMESPACE`: at most `MAX_ID_LENGTH` (lease-fence's) letters, digits, `_ . : -`
 * (it names a log stream, so narrower than an id); `fallback` when unset or blank.
 */
export const envNamespace = (fallback: string) =>
  envText(fallback).pipe(
    z
      .string()
      .max(MAX_ID_LENGTH, `must be at most ${MAX_ID_LENGTH} characters`)
      .regex(/^[\w.:-]+$/, 'must use only letters, digits, _ . : -'),
  );

/** One offending variable: its name and what is wrong with it. */
export interface EnvIssue {
  /** The variable's name, e.g. `PORT`. */
  readonly variable: string;
  /** What is wrong, e.g. `must be an integer (TCP port) in [0, 65535], got "x"`. */
  readonly message: string;
}

/**
 * A configuration that cannot be used: one issue per offending variable. The message lists them,
 * one a line, under `invalid configuration:`; each app's error class extends it.
 */
export class EnvConfigError extends Error {
  /** Stable error code. */
  readonly code = 'invalid-config';

  /** @param issues - One entry per offending variable. */
  constructor(readonly issues: readonly EnvIssue[]) {
    super(`invalid configuration:\n${issues.map((i) => `  ${i.variable}: ${i.message}`).join('\n')}`);
    this.name = 'EnvConfigError';
  }
}

/** The issues of a failed parse of an environment schema, each named by its variable (the issue's first path key). */
export const envIssuesOf = (error: z.ZodError): EnvIssue[] =>
  error.issues.map((issue) => ({ variable: String(issue.path[0] ?? 'environment'), message: issue.message }));
