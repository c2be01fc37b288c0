/**
 * The `lease-fence` command line: one commander program whose subcommands each live in a module
 * of their own under `src/commands/` (and the MCP server under `src/mcp/`). `main.ts` is the only
 * place that touches `process` (argv, exit code); the program itself is testable in-process.
 */
import { Command } from 'commander';
import { createRequire } from 'node:module';
import { mcpCommand } from './mcp/command.js';

/** The package's version, as `lease-fence --version` prints it. */
const VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

/**
 * Builds the `lease-fence` program with every subcommand registered. Commander is told to throw
 * instead of exiting (`exitOverride`) so callers decide the process's fate.
 */
export function createProgram(): Command {
  const program = new Command('lease-fence')
    .description('Leases with fencing tokens from a lease-fence coordinator, for shells, cron jobs, CI and AI agents.')
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride();
  program.addCommand(mcpCommand());
  return program;
}
