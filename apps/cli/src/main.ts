#!/usr/bin/env node
/**
 * `lease-fence`: the composition root of the command line (`program.ts` builds the commands).
 * Help and version exit 0; a usage error commander finds (an unknown flag, a missing argument)
 * exits 64 like every bad flag; a {@link CliError} prints its message and exits with its code.
 */
import { CommanderError } from 'commander';
import type { CliIo } from './cli-io.js';
import { CliError, EXIT } from './exit-codes.js';
import { createProgram } from './program.js';

const io: CliIo = { stdout: process.stdout, stderr: process.stderr, exitCode: EXIT.ok };
// A reader that went away (`lease-fence events --follow | head -3`) ends the command quietly, as
// it does for other Unix tools, instead of an unhandled EPIPE; a command that has to clean up
// first (`mcp`: release its leases) ends itself.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  if (io.onReaderGone === undefined) process.exit(io.exitCode);
  io.onReaderGone();
});

try {
  await createProgram(io).parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) io.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  else if (error instanceof CliError) {
    io.stderr.write(`lease-fence: ${error.message}\n`);
    io.exitCode = error.exitCode;
  } else {
    io.stderr.write(
      `lease-fence: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    io.exitCode = EXIT.internal;
  }
}
// Exit now rather than when the event loop drains: idle keep-alive sockets to the coordinator
// would otherwise hold the process for seconds after the command's work is done.
process.stdout.write('', () => process.exit(io.exitCode));
