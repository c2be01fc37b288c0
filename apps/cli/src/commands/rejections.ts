/**
 * `lease-fence rejections [--resource R] [--json]`: the refused writes the gates reported
 * (`GET /v1/rejections`: the most recent `REJECTIONS_LISTED` of all resources), oldest first.
 */
import { formatWallDateTime, formatWallTime, isLateReport } from '@lease-fence/dashboard-model';
import { REJECTIONS_LISTED, RejectionsReplySchema } from '@lease-fence/protocol';
import { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { addConnectionOptions, connectionSettingsOf, coordinatorHttp, toCliError } from '../connection.js';
import { EXIT_CODES_HELP } from '../exit-codes.js';
import { resourceFlag } from '../flags.js';
import { renderTable } from '../table.js';

/**
 * What a full `GET /v1/rejections` reply ({@link REJECTIONS_LISTED} rows) leaves out, and where to
 * find it: after a refusal storm on one resource, another's older refusals are no longer listed.
 */
const OLDER_LEFT_OUT =
  `the most recent ${REJECTIONS_LISTED} refused writes of all resources, which is all the coordinator lists; ` +
  `older ones are in its log: lease-fence events --json | jq -c 'select(.event.type == "FenceRejected")'`;

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

/** The `rejections` subcommand. */
export function rejectionsCommand(io: CliIo): Command {
  const command = new Command('rejections')
    .summary('list the writes gates refused (stale or double-grant fences)')
    .description(
      `List the refused writes the gates reported, oldest first (the most recent ${REJECTIONS_LISTED} of all resources, which is all the coordinator lists; older ones are in its log: lease-fence events): position, time (when the coordinator recorded it; a refusal its gate reported late, from its outbox after a restart or an outage, also gives the time the gate refused it by its own clock, as the dashboard does), resource, gate, seq (the number the gate gave the refusal: the \`seq\` of the 409 its writer got), kind, the refused holder and fence, and the holder and fence the gate had. Explain one with \`lease-fence explain <position>\`.`,
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
    // A full list may have left older refusals out, of any resource: say so rather than "none".
    const olderLeftOut = rejections.length >= REJECTIONS_LISTED ? OLDER_LEFT_OUT : undefined;
    if (flags.json === true) {
      io.stdout.write(`${JSON.stringify({ rejections: shown })}\n`);
      if (olderLeftOut !== undefined) io.stderr.write(`lease-fence: ${olderLeftOut}\n`);
      return;
    }
    if (shown.length === 0) {
      io.stdout.write(
        `no refused writes${resource === undefined ? '' : ` for ${resource}`}` +
          `${olderLeftOut === undefined ? '' : ` among ${olderLeftOut}`}\n`,
      );
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
    if (olderLeftOut !== undefined) io.stdout.write(`(listed: ${olderLeftOut})\n`);
  });
  return command;
}
