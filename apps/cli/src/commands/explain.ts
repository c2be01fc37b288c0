/**
 * `lease-fence explain <position> [--json]`: the one-sentence explanation of a refused write, the
 * same the dashboard's investigation view gives: the log up to the refusal is read and handed to
 * `investigate` of `@lease-fence/dashboard-model` (the one copy of that explanation).
 */
import { investigate, ViewHistory } from '@lease-fence/dashboard-model';
import { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { addConnectionOptions, connectionSettingsOf, coordinatorHttp, toCliError } from '../connection.js';
import { CliError, EXIT, EXIT_CODES_HELP, UsageError } from '../exit-codes.js';
import { positionFlag } from '../flags.js';
import { pastTheLogEnd, readEvents } from '../log-reader.js';

/** The `explain` subcommand. */
export function explainCommand(io: CliIo): Command {
  const command = new Command('explain')
    .summary('explain a refused write in one sentence')
    .description(
      'Explain the refused write (FenceRejected) at a log position in one sentence, as the dashboard does: both holders, both fences, the gate and the times.',
    )
    .argument('<position>', 'the log position of a FenceRejected (see `lease-fence rejections`)')
    .option('--json', 'print { position, resource, kind, explanation }');
  addConnectionOptions(command).addHelpText(
    'after',
    `
Examples:
  $ lease-fence explain 1234
  $ lease-fence explain "$(lease-fence rejections --json | jq '.rejections[-1].position')"

${EXIT_CODES_HELP}`,
  );
  command.action(async (positionText: string, flags: { json?: boolean }, self: Command) => {
    const settings = connectionSettingsOf(self);
    const position = positionFlag('<position>', positionText);
    const history = new ViewHistory();
    try {
      await readEvents(coordinatorHttp(settings), { through: position }, (recorded) => history.append(recorded));
    } catch (error) {
      throw toCliError(error, settings);
    }
    const result = investigate(history, position);
    if (!result.ok) {
      if (result.reason === 'not-a-rejection') {
        throw new UsageError(`<position>: the event at ${position} is a ${result.type}, not a FenceRejected`);
      }
      throw new CliError(EXIT.usage, `<position>: ${pastTheLogEnd(position, history.position)}`);
    }
    const { rejection, explanation } = result.investigation;
    if (flags.json === true) {
      io.stdout.write(
        `${JSON.stringify({ position, resource: rejection.resource, kind: rejection.kind, explanation })}\n`,
      );
    } else io.stdout.write(`${explanation}\n`);
  });
  return command;
}
