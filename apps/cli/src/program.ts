/**
 * The `lease-fence` command line: one commander program whose subcommands each live in a module
 * of their own under `src/commands/` (and the MCP server under `src/mcp/`). `main.ts` is the only
 * place that touches `process.argv` and the exit code; the program itself is testable in-process.
 */
import { Command } from 'commander';
import { createRequire } from 'node:module';
import type { CliIo } from './cli-io.js';
import { eventsCommand } from './commands/events.js';
import { explainCommand } from './commands/explain.js';
import { holdersCommand } from './commands/holders.js';
import { rejectionsCommand } from './commands/rejections.js';
import { runCommand } from './commands/run.js';
import { EXIT_CODES_HELP } from './exit-codes.js';
import { mcpCommand } from './mcp/command.js';

/** The package's version, as `lease-fence --version` prints it. */
const VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

const HELP = `
Every command reads its connection from flags or the environment (a flag wins):
  --url         LEASE_FENCE_URL                the coordinator's base URL
  --token-file  LEASE_FENCE_AGENT_TOKEN_FILE   a file holding one token
  --token       LEASE_FENCE_AGENT_TOKEN        the token itself
  --clock-skew  LEASE_FENCE_CLOCK_SKEW         clock drift allowed over one TTL (500ms)
Durations are a whole number with a unit: 500ms, 30s, 2m, 1h.

${EXIT_CODES_HELP}`;

/**
 * Builds the `lease-fence` program with every subcommand registered. Commander is told to throw
 * instead of exiting (`exitOverride`) so callers decide the process's fate; commands report
 * their exit code in `io.exitCode` or throw a `CliError`.
 *
 * @param io - Where output goes and where the exit code is left.
 */
export function createProgram(io: CliIo): Command {
  const program = new Command('lease-fence')
    .description('Leases with fencing tokens from a lease-fence coordinator, for shells, cron jobs, CI and AI agents.')
    .version(VERSION)
    .enablePositionalOptions()
    .showHelpAfterError()
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .addHelpText('after', HELP)
    .exitOverride();
  for (const command of [
    runCommand(io),
    holdersCommand(io),
    eventsCommand(io),
    rejectionsCommand(io),
    explainCommand(io),
    mcpCommand(io),
  ])
    program.addCommand(command.exitOverride());
  return program;
}
