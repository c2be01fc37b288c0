/**
 * How the sidecar logs an operation it retries until the coordinator answers (its start-up reads
 * of the signing keys and of the resource's latest fence, its refusal reports). Started before
 * the coordinator, it retried each read every second and logged each failure at warn with its
 * stack, ~3 KB a line, twice a second: the lines an operator needs were lost among them.
 */
/** The part of a pino logger {@link retryFailureLog} writes to: a line of fields and a message. */
export interface RetryLogger {
  error(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

/**
 * An error's message followed by those of its causes (`cause`, up to 5 deep), each left out when an
 * earlier one already says it: `fetch failed` alone does not say whether the coordinator refused
 * the connection or did not answer; its cause does.
 */
const reasonOf = (error: unknown): string => {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth += 1) {
    const message = current instanceof Error ? current.message : String(current);
    if (!parts.some((part) => part.includes(message))) parts.push(message);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(': ');
};

/**
 * The `onFailure` of a retried operation: the first failure, and each whose reason (the error's
 * message and its causes') differs from the one before, is logged at warn as `{ reason }` without
 * a stack; the same reason again is logged at debug with the error (`err`, stack included) and how
 * many times it repeated (`repeats`). `fields` (e.g. a refusal's `seq`) go on either line.
 * @param message - The log line's message, the same for every failure of the operation.
 * @param level - The level of the lines in words: `error` when only an operator can end the failures.
 */
export function retryFailureLog(
  logger: RetryLogger,
  message: string,
  level: 'warn' | 'error' = 'warn',
): (error: unknown, fields?: Readonly<Record<string, unknown>>) => void {
  let lastReason: string | undefined;
  let repeats = 0;
  return (error, fields = {}) => {
    const reason = reasonOf(error);
    if (reason === lastReason) {
      repeats += 1;
      logger.debug({ ...fields, err: error, repeats }, message);
      return;
    }
    lastReason = reason;
    repeats = 0;
    logger[level]({ ...fields, reason }, message);
  };
}
