/** Polling for a condition in black-box tests, shared by the gate, CLI and MCP suites. */

/** Waits until `probe` is true, polling; throws with `what` after `timeoutMillis` (a deadline, not an assertion on timing). */
export async function eventually(
  what: string,
  probe: () => Promise<boolean> | boolean,
  timeoutMillis = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMillis;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
