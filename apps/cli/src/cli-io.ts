/**
 * What a command writes to and how it reports its exit code, so `program.ts` stays free of
 * `process` and the commands can be run in-process by tests.
 */

/** Somewhere text is written (a stream's `write`). */
export interface TextSink {
  write(text: string): unknown;
}

/** The command line's output and exit code. `main.ts` passes the process's own. */
export interface CliIo {
  /** Results: tables, JSON documents, JSON lines. */
  readonly stdout: TextSink;
  /** Errors, warnings and progress, each line prefixed `lease-fence:`. */
  readonly stderr: TextSink;
  /** The exit code a command chose (`run` passes its command's through); 0 unless set. */
  exitCode: number;
  /**
   * Set by a command that must clean up when the reader of its stdout goes away (EPIPE): called
   * instead of exiting at once, and the command then ends itself (`mcp` on stdio: the client died,
   * its leases are released). Unset, the process exits with `exitCode` at once.
   */
  onReaderGone?: () => void;
}

/** Writes one `lease-fence: …` line to `io.stderr`. */
export function warn(io: CliIo, message: string): void {
  io.stderr.write(`lease-fence: ${message}\n`);
}
