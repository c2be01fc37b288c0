/**
 * `lease-fence events [--from <position>] [--follow] [--json]`: the coordinator's log, read with
 * `GET /v1/events`; with `--follow`, the `/v1/stream` WebSocket keeps printing new events until
 * interrupted (resuming after the last position printed when the server closes the stream).
 */
import type { RecordedEvent } from '@lease-fence/protocol';
import { StreamFrameSchema } from '@lease-fence/protocol';
import { Command } from 'commander';
import WebSocket from 'ws';
import { type CliIo, warn } from '../cli-io.js';
import {
  addConnectionOptions,
  type ConnectionSettings,
  connectionSettingsOf,
  coordinatorHttp,
  toCliError,
} from '../connection.js';
import { CliError, EXIT, EXIT_CODES_HELP } from '../exit-codes.js';
import { parseFlag, PositionSchema } from '../flags.js';
import { readEvents, readHead } from '../log-reader.js';
import { renderTable } from '../table.js';

/** The fields of an event's data worth a column, in this order. */
const SUMMARY_FIELDS = ['resource', 'holderId', 'fence', 'ttlMillis', 'gateId', 'seq', 'kind'] as const;

/** One event in a line: its notable fields as `name=value`. */
export function summarizeEvent(recorded: RecordedEvent): string {
  const data = recorded.event.data as Record<string, unknown>;
  return SUMMARY_FIELDS.filter((field) => data[field] !== undefined)
    .map((field) => `${field}=${String(data[field])}`)
    .join(' ');
}

const row = (recorded: RecordedEvent): string[] => {
  const data = recorded.event.data as { wallMillis?: number };
  return [
    String(recorded.position),
    data.wallMillis === undefined ? '—' : new Date(data.wallMillis).toISOString(),
    recorded.event.type,
    summarizeEvent(recorded),
  ];
};
const HEADERS = ['POSITION', 'TIME', 'TYPE', 'DETAILS'];

/** The `events` subcommand. */
export function eventsCommand(io: CliIo): Command {
  const command = new Command('events')
    .summary("print the coordinator's log; --follow for new events as they happen")
    .description(
      'Print the events of the coordinator’s log from --from on (position, time, type, details); with --follow keep printing new events until interrupted.',
    )
    .option(
      '--from <position>',
      'the first position to print (default: 1, the start of the log; with --follow: only events logged from now on)',
    )
    .option('--follow', 'keep printing new events as they are logged (Ctrl-C to stop)')
    .option('--json', 'print { events: [...], head } (with --follow: one JSON event per line)');
  addConnectionOptions(command).addHelpText(
    'after',
    `
Examples:
  $ lease-fence events --from 1200
  $ lease-fence events --follow
  $ lease-fence events --follow --json | jq -c 'select(.event.type == "FenceRejected")'

${EXIT_CODES_HELP}`,
  );
  command.action(async (flags: { from?: string; follow?: boolean; json?: boolean }, self: Command) => {
    const settings = connectionSettingsOf(self);
    const json = flags.json === true;
    if (flags.follow === true) {
      let after: number;
      try {
        after =
          flags.from === undefined
            ? await readHead(coordinatorHttp(settings))
            : parseFlag(PositionSchema, '--from', flags.from) - 1;
      } catch (error) {
        throw toCliError(error, settings); // a CliError (a bad --from) passes through unchanged
      }
      warn(io, `following the log after position ${after} (Ctrl-C to stop)`);
      await follow(io, settings, after, json);
      return;
    }
    const after = flags.from === undefined ? 0 : parseFlag(PositionSchema, '--from', flags.from) - 1;
    const events: RecordedEvent[] = [];
    let head: number;
    try {
      head = await readEvents(coordinatorHttp(settings), { after }, (recorded) => events.push(recorded));
    } catch (error) {
      throw toCliError(error, settings);
    }
    if (json) io.stdout.write(`${JSON.stringify({ events, head })}\n`);
    else io.stdout.write(renderTable(HEADERS, events.map(row)));
  });
  return command;
}

/**
 * Prints events from the stream after `after`, forever: each `event` frame as a line (JSON, or
 * the table's columns), resuming after the last printed position when the server sends `closing`.
 * Ends on SIGINT/SIGTERM (exit 0), or with a {@link CliError} when the stream cannot be opened.
 */
async function follow(io: CliIo, settings: ConnectionSettings, after: number, json: boolean): Promise<void> {
  let last = after;
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    while (!stop.signal.aborted) {
      const resumeAfter = await streamOnce(settings, last, stop.signal, (recorded) => {
        last = recorded.position;
        io.stdout.write(json ? `${JSON.stringify(recorded)}\n` : `${row(recorded).join('  ')}\n`);
      });
      if (resumeAfter === undefined) return;
      warn(io, `the stream closed; resuming after position ${last}`);
    }
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
}

/**
 * One WebSocket connection to `/v1/stream?after=`. Resolves `undefined` when stopped, the last
 * position when the server closed the stream (to resume); rejects with a {@link CliError} when the
 * connection cannot be opened or is refused.
 */
function streamOnce(
  settings: ConnectionSettings,
  after: number,
  signal: AbortSignal,
  onEvent: (recorded: RecordedEvent) => void,
): Promise<number | undefined> {
  const url = `${settings.coordinatorUrl.replace(/^http/, 'ws')}/v1/stream?after=${after}`;
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${settings.agentToken}` } });
    let opened = false;
    const onAbort = (): void => {
      socket.close(1000);
      resolve(undefined);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    socket.on('open', () => {
      opened = true;
    });
    socket.on('unexpected-response', (_request, response) => {
      const status = response.statusCode ?? 0;
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        signal.removeEventListener('abort', onAbort);
        const code =
          status === 401 || status === 403
            ? EXIT.tokenRefused
            : status === 503
              ? EXIT.coordinatorUnavailable
              : EXIT.protocol;
        reject(
          new CliError(
            code,
            `the coordinator at ${settings.coordinatorUrl} refused the stream (HTTP ${status}): ${body}`,
          ),
        );
      });
    });
    socket.on('message', (data) => {
      const parsed = StreamFrameSchema.safeParse(JSON.parse(String(data)));
      if (!parsed.success) return; // a frame this version does not know (heartbeats and stats are known and skipped)
      if (parsed.data.type === 'event') onEvent(parsed.data);
    });
    socket.on('error', (error) => {
      if (opened) return; // 'close' follows
      signal.removeEventListener('abort', onAbort);
      reject(
        new CliError(
          EXIT.coordinatorUnavailable,
          `cannot reach the coordinator at ${settings.coordinatorUrl}: ${error.message}`,
          { cause: error },
        ),
      );
    });
    socket.on('close', () => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) resolve(undefined);
      else if (opened) resolve(after);
    });
  });
}
