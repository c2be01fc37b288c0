/**
 * `lease-fence holders [--at <ISO time | position>] [--json]`: who holds each resource now (the
 * coordinator's `GET /v1/leases`), or who held it at a past wall time or log position (the log
 * folded by `@lease-fence/dashboard-model`, the dashboard's own model).
 */
import { foldEvents, formatDuration, openGeneration, whoHeld } from '@lease-fence/dashboard-model';
import { LeasesReplySchema, type RecordedEvent } from '@lease-fence/protocol';
import { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { addConnectionOptions, connectionSettingsOf, coordinatorHttp, toCliError } from '../connection.js';
import { EXIT_CODES_HELP, UsageError } from '../exit-codes.js';
import { positionFlag } from '../flags.js';
import { inTheFuture, pastTheLogEnd, readEvents } from '../log-reader.js';
import { renderTable } from '../table.js';

/** One holder, as `holders --json` prints it. */
interface HolderRow {
  readonly resource: string;
  readonly holderId: string;
  readonly fence: number;
  readonly ttlMillis: number | undefined;
  /** Now: carried across a coordinator restart and inside its grace period. */
  readonly inGrace?: boolean;
  /** Past: when this generation was granted (coordinator wall clock, ISO 8601). */
  readonly since?: string;
}

/** `--at`: an ISO 8601 time (wall clock) or a log position. */
type At = { readonly wallMillis: number } | { readonly position: number };

const parseAt = (text: string): At => {
  if (/^\d+$/.test(text)) return { position: positionFlag('--at', text) };
  const wallMillis = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(wallMillis)) {
    throw new UsageError(
      `--at: must be an ISO 8601 time (2026-12-01T21:30:00Z) or a log position (a whole number), got ${JSON.stringify(text)}`,
    );
  }
  return { wallMillis };
};

/** The `holders` subcommand. */
export function holdersCommand(io: CliIo): Command {
  const command = new Command('holders')
    .summary('who holds each resource, now or at a past time or log position')
    .description(
      'List the current holders (resource, holder, fence, TTL), or with --at the holders at a past wall time or log position, read from the log.',
    )
    .option('--at <time|position>', 'an ISO 8601 time (coordinator wall clock) or a log position')
    .option('--json', 'print one JSON document: { holders: [...] }');
  addConnectionOptions(command).addHelpText(
    'after',
    `
Examples:
  $ lease-fence holders
  $ lease-fence holders --at 2026-12-01T21:30:00Z
  $ lease-fence holders --at 1234 --json | jq '.holders[] | select(.resource == "deploy-slot-a")'

${EXIT_CODES_HELP}`,
  );
  command.action(async (flags: { at?: string; json?: boolean }, self: Command) => {
    const settings = connectionSettingsOf(self);
    const at = flags.at === undefined ? undefined : parseAt(flags.at);
    const future =
      at === undefined || !('wallMillis' in at)
        ? undefined
        : inTheFuture(flags.at as string, at.wallMillis, Date.now(), settings.clockSkewMillis);
    if (future !== undefined) throw new UsageError(`--at: ${future}; leave --at out for the holders now`);
    const http = coordinatorHttp(settings);
    let holders: HolderRow[];
    try {
      holders = at === undefined ? await currentHolders() : await pastHolders(at);
    } catch (error) {
      throw toCliError(error, settings);
    }
    if (flags.json === true) {
      io.stdout.write(`${JSON.stringify({ ...(flags.at === undefined ? {} : { at: flags.at }), holders })}\n`);
      return;
    }
    if (holders.length === 0) {
      io.stdout.write('no resource is held\n');
      return;
    }
    io.stdout.write(
      renderTable(
        ['RESOURCE', 'HOLDER', 'FENCE', 'TTL', at === undefined ? 'IN GRACE' : 'SINCE'],
        holders.map((h) => [
          h.resource,
          h.holderId,
          String(h.fence),
          h.ttlMillis === undefined ? '—' : formatDuration(h.ttlMillis),
          at === undefined ? (h.inGrace === true ? 'yes' : 'no') : (h.since ?? '—'),
        ]),
      ),
    );

    async function currentHolders(): Promise<HolderRow[]> {
      const { value } = await http.get('list leases', '/v1/leases', { 200: LeasesReplySchema });
      return value.leases
        .map(({ resource, holderId, fence, ttlMillis, inGrace }) => ({ resource, holderId, fence, ttlMillis, inGrace }))
        .sort((a, b) => a.resource.localeCompare(b.resource));
    }

    async function pastHolders(when: At): Promise<HolderRow[]> {
      const events: RecordedEvent[] = [];
      const head = await readEvents(http, 'position' in when ? { through: when.position } : {}, (recorded) => {
        events.push(recorded);
      });
      if ('position' in when && when.position > head)
        throw new UsageError(`--at: ${pastTheLogEnd(when.position, head)}`);
      const state = foldEvents(events);
      const rows: HolderRow[] = [];
      for (const [resource, lane] of state.lanes) {
        const generation =
          'position' in when
            ? openGeneration(lane)
            : (() => {
                const answer = whoHeld(state, resource, when.wallMillis);
                return answer.held ? answer.generation : undefined;
              })();
        if (generation === undefined) continue;
        rows.push({
          resource,
          holderId: generation.holderId,
          fence: generation.fence,
          ttlMillis: generation.ttlMillis,
          since: new Date(generation.startWallMillis).toISOString(),
        });
      }
      return rows.sort((a, b) => a.resource.localeCompare(b.resource));
    }
  });
  return command;
}
