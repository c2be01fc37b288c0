/**
 * Follows a spawned service's JSON log lines (pino, one per line on stdout) until it logs
 * `listening` with its bound `url`: how the coordinator and the gate sidecar announce their
 * ephemeral port.
 */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** What {@link followUntilListening} collects from a child. */
export interface ListeningChild {
  /** The URL it logged with `listening`; rejects if it exits first (with its output in the message). */
  readonly url: Promise<string>;
  /** Every stdout line so far. */
  readonly logLines: readonly string[];
  /** Its stderr so far. */
  readonly stderr: () => string;
}

/** Starts collecting `child`'s output; `name` appears in the error if it exits before listening. */
export function followUntilListening(child: ChildProcess, name: string): ListeningChild {
  const logLines: string[] = [];
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      logLines.push(line);
      try {
        const record = JSON.parse(line) as { msg?: string; url?: string };
        if (record.msg === 'listening' && typeof record.url === 'string') resolve(record.url);
      } catch {
        // not a JSON line
      }
    });
    child.once('exit', (code) =>
      reject(new Error(`${name} exited with ${String(code)} before listening: ${stderr}${logLines.join('\n')}`)),
    );
  });
  return { url, logLines, stderr: () => stderr };
}
