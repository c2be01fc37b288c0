/** Polling for a condition in black-box tests, shared by the gate, CLI, MCP and crash suites. */

/**
 * Polls `probe` every `intervalMillis` (50 ms unless given) until it returns a truthy value, and
 * resolves with that value (a boolean probe resolves `true`; a `find` resolves what it found).
 * After `timeoutMillis` it throws: `timed out waiting for <what>` when `what` is a string, or the
 * message `what()` builds then (to show the state that was waited on). A deadline, not an
 * assertion on timing.
 */
export async function eventually<T>(
  what: string | (() => string),
  probe: () => T | Promise<T>,
  timeoutMillis = 20_000,
  intervalMillis = 50,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMillis;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(typeof what === 'string' ? `timed out waiting for ${what}` : what());
    await new Promise((resolve) => setTimeout(resolve, intervalMillis));
  }
}
