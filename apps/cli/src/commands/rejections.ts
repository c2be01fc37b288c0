/**
 * `lease-fence rejections [--resource R] [--json]`: the refused writes the gates reported
 * (`GET /v1/rejections`: the most recent 1000), oldest first.
 */
import { formatWallDateTime, formatWallTime, isLateReport } from '@lease-fence/dashboard-model';
import { RejectionsReplySchema } from '@lease-fence/protocol';
import { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { addConnectionOptions, connectionSettingsOf, coordinatorHttp, toCliError } from '../connection.js';
import { EXIT_CODES_HELP } from '../exit-codes.js';
import { resourceFlag } from '../flags.js';
import { renderTable } from '../table.js';

/** The `rejections` subcommand. */
export function rejectionsCommand(io: CliIo): Command {
  const command = new Command('rejections')
    .summary('list the writes gates refused (stale or double-grant fences)')
    .description(
      'List the refused writes the gates reported, oldest first (the most recent 1000): position, time (when the coordinator recorded it; a refusal its gate reported late, from its outbox after a restart or an outage, also gives the time the gate refused it by its own clock, as the dashboard does), resource, gate, seq (the number the gate gave the refusal: the `seq` of the 409 its writer got), kind, the refused holder and fence, and the holder and fence the gate had. Explain one with `lease-fence explain <position>`.',
    )
    .option('-r, --resource <resource>', 'only this resource')
    .option('--json', 'print one JSON document: { rejections: [...] }');
  addConnectionOptions(command).addHelpText(
    'after',
    `
Examples:
  $ lease-fence rejections
  $ lease-fence rejections --resource deploy-slot-a --json

${EXIT_CODES_HELP}`,
  );
  command.action(async (flags: { resource?: string; json?: boolean }, self: Command) => {
    const settings = connectionSettingsOf(self);
    const resource = flags.resource === undefined ? undefined : resourceFlag('--resource', flags.resource);
    let rejections;
    try {
      ({
        value: { rejections },
      } = await coordinatorHttp(settings).get('list rejections', '/v1/rejections', { 200: RejectionsReplySchema }));
    } catch (error) {
      throw toCliError(error, settings);
    }
    const shown = rejections.filter((r) => resource === undefined || r.resource === resource);
    if (flags.json === true) {
      io.stdout.write(`${JSON.stringify({ rejections: shown })}\n`);
      return;
    }
    if (shown.length === 0) {
      io.stdout.write(`no refused writes${resource === undefined ? '' : ` for ${resource}`}\n`);
      return;
    }
    io.stdout.write(
      renderTable(
        ['POSITION', 'TIME', 'RESOURCE', 'GATE', 'SEQ', 'KIND', 'REFUSED', 'GATE HAD'],
        shown.map((r) => [
          String(r.position),
          timeCell(r.wallMillis, r.gateWallMillis),
          r.resource,
          r.gateId,
          String(r.seq),
          r.kind,
          `${r.rejected.holderId} fence ${r.rejected.fence}`,
          `${r.current.holderId} fence ${r.current.fence}`,
        ]),
      ),
    );
  });
  return command;
}

/**
 * The TIME cell: when the coordinator recorded the refusal, and, for one its gate reported late
 * (`isLateReport`, the dashboard's rule), when the gate refused it by its own clock, as the
 * dashboard's "reported late" badge and `lease-fence explain` say.
 */
function timeCell(recordedWallMillis: number, gateWallMillis: number | undefined): string {
  const recorded = formatWallDateTime(recordedWallMillis);
  return gateWallMillis !== undefined && isLateReport(recordedWallMillis, gateWallMillis)
    ? `${recorded} (reported late: the gate refused it at ${formatWallTime(gateWallMillis)} by its own clock)`
    : recorded;
}
