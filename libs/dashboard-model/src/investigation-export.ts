/**
 * Export and import of an investigation: a JSON file with the events it needs (with their log
 * positions) and a Markdown summary for a ticket. Importing the JSON folds those events with the
 * same {@link evolveView} and rebuilds the same investigation, with no coordinator running.
 */
import { RecordedEventSchema, type RecordedEvent } from '@lease-fence/protocol';
import { describeStamp, formatDuration, formatWallDateTime, formatWallTime, shortBootId } from './format.js';
import {
  afterRefusal,
  contextCaption,
  describeAfterRefusal,
  investigate,
  investigationPositions,
  type Investigation,
  type InvestigationResult,
} from './investigation.js';
import { ViewHistory } from './view-history.js';
import type { Generation } from './view-state.js';

/** Identifies the file format. */
export const INVESTIGATION_FORMAT = 'lease-fence/investigation';

/** The exported JSON document, version 1. */
export interface InvestigationExport {
  readonly format: typeof INVESTIGATION_FORMAT;
  readonly version: 1;
  /** Position of the `FenceRejected`. */
  readonly position: number;
  readonly contextRadius: number;
  /** The sentence, for people who read the file itself. */
  readonly explanation: string;
  /** Every event the investigation needs, in position order (a slice of the log: positions may skip). */
  readonly events: readonly RecordedEvent[];
}

/**
 * The JSON document of an investigation.
 *
 * @param history - The history the investigation was built from.
 * @param investigation - The result of {@link investigate} on that history.
 */
export function exportInvestigation(history: ViewHistory, investigation: Investigation): InvestigationExport {
  const events = investigationPositions(history, investigation).map((p) => history.index.at(p) as RecordedEvent);
  return {
    format: INVESTIGATION_FORMAT,
    version: 1,
    position: investigation.position,
    contextRadius: investigation.contextRadius,
    explanation: investigation.explanation,
    events,
  };
}

/**
 * Outcome of {@link parseInvestigationExport}: the document, or a message saying what is wrong
 * with the file (data, not thrown).
 */
export type ParseExportResult =
  { readonly ok: true; readonly value: InvestigationExport } | { readonly ok: false; readonly message: string };

/**
 * Parses an exported file: JSON, the format marker and version, positive integer positions, and
 * every event against the protocol's `RecordedEventSchema`, in increasing position order.
 *
 * @param text - The file's contents.
 */
export function parseInvestigationExport(text: string): ParseExportResult {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `not JSON: ${(error as Error).message}` };
  }
  if (typeof raw !== 'object' || raw === null)
    return { ok: false, message: 'not an investigation export: expected a JSON object' };
  const doc = raw as Record<string, unknown>;
  if (doc['format'] !== INVESTIGATION_FORMAT)
    return {
      ok: false,
      message: `not an investigation export: format must be "${INVESTIGATION_FORMAT}", got ${JSON.stringify(doc['format'])}`,
    };
  if (doc['version'] !== 1)
    return {
      ok: false,
      message: `unsupported investigation export version ${JSON.stringify(doc['version'])} (this dashboard reads version 1)`,
    };
  const position = doc['position'];
  const contextRadius = doc['contextRadius'];
  if (typeof position !== 'number' || !Number.isSafeInteger(position) || position < 1)
    return {
      ok: false,
      message: `position must be a positive integer (log position), got ${JSON.stringify(position)}`,
    };
  if (typeof contextRadius !== 'number' || !Number.isSafeInteger(contextRadius) || contextRadius < 0)
    return {
      ok: false,
      message: `contextRadius must be a non-negative integer (events), got ${JSON.stringify(contextRadius)}`,
    };
  const events = RecordedEventSchema.array().safeParse(doc['events']);
  if (!events.success) {
    const issue = events.error.issues[0];
    return {
      ok: false,
      message: `events${issue === undefined ? '' : `.${issue.path.join('.')}`}: ${issue?.message ?? 'invalid'}`,
    };
  }
  for (let i = 1; i < events.data.length; i += 1) {
    if ((events.data[i]?.position ?? 0) <= (events.data[i - 1]?.position ?? 0))
      return {
        ok: false,
        message: `events must be in increasing position order; event ${i} has position ${events.data[i]?.position}`,
      };
  }
  return {
    ok: true,
    value: {
      format: INVESTIGATION_FORMAT,
      version: 1,
      position,
      contextRadius,
      explanation: typeof doc['explanation'] === 'string' ? doc['explanation'] : '',
      events: events.data,
    },
  };
}

/**
 * Rebuilds the investigation from an exported document alone (no coordinator).
 *
 * @returns The same {@link InvestigationResult} as {@link investigate} on the full log, and the
 *   history of the imported events (for the view's event list).
 */
export function importInvestigation(doc: InvestigationExport): {
  readonly result: InvestigationResult;
  readonly history: ViewHistory;
} {
  const history = new ViewHistory();
  for (const recorded of doc.events) history.append(recorded);
  return { result: investigate(history, doc.position, doc.contextRadius), history };
}

/**
 * A Markdown summary for a ticket: the sentence, both generations with the clock of every time,
 * the floor, restarts, the events around the rejection, and the link that reopens the view.
 * The generations are described as of the refusal and say so; what the listed events show after
 * it (renewals, the end) is in the table's last column, so the summary never contradicts its own
 * event list.
 *
 * @param investigation - The investigation.
 * @param link - Permalink of the investigation view (no token in it).
 */
export function investigationMarkdown(investigation: Investigation, link: string | undefined): string {
  const { rejection, rejected, current, floor } = investigation;
  const lines = [
    `## Stale write refused on \`${rejection.resource}\` at ${formatWallDateTime(rejection.stamp.wallMillis)} (log position ${investigation.position})`,
    '',
    investigation.explanation,
    '',
    `Both generations as of the refusal (position ${investigation.position}); the last column is what the events below show after it.`,
    '',
    '| | holder | fence | start | end | how it ended | after the refusal |',
    '|---|---|---|---|---|---|---|',
    generationRow('refused', rejection.rejected.holderId, rejection.rejected.fence, rejected, investigation),
    generationRow('floor', rejection.current.holderId, rejection.current.fence, current, investigation),
    '',
    `- Rejection: gate \`${rejection.gateId}\` seq ${rejection.seq} (${rejection.kind}), recorded ${describeStamp(rejection.stamp)}` +
      (rejection.gateWallMillis === undefined ? '' : `; gate wall clock ${formatWallTime(rejection.gateWallMillis)}`),
    `- Gate floor: fence ${floor.fence} of ${floor.holderId}` +
      (floor.admitted === undefined
        ? ' (raised by a write; writes are not logged)'
        : `, pushed by FenceAdmitted at position ${floor.admitted.position}`),
    ...investigation.restarts.map(
      (r) =>
        `- Coordinator restart at position ${r.stamp.position} (${formatWallDateTime(r.stamp.wallMillis)} wall): boot ${shortBootId(r.stamp.bootId)}, recovered fence ${r.recoveredFence}, ${r.eventsReplayed} events replayed in ${formatDuration(r.replayMillis)}` +
        (r.carried === undefined
          ? ''
          : `; carried fence ${r.carried.fence} of ${r.carried.holderId} until ${formatWallTime(r.graceEndWallMillis)}`),
    ),
    '',
    `${contextCaption(investigation)}:`,
    '',
    '| position | type | resource | holder | fence | wall time |',
    '|---|---|---|---|---|---|',
    ...investigation.context.events.map((e) => {
      const d = e.event.data as Record<string, unknown>;
      const mark = e.position === investigation.position ? ' **←**' : '';
      return `| ${e.position}${mark} | ${e.event.type} | ${String(d['resource'] ?? '')} | ${String(d['holderId'] ?? (d['rejected'] as { holderId?: string } | undefined)?.holderId ?? '')} | ${String(d['fence'] ?? (d['rejected'] as { fence?: number } | undefined)?.fence ?? '')} | ${formatWallTime(e.event.data.wallMillis)} |`;
    }),
    '',
    "Times are the coordinator's wall clock (UTC) unless marked; monotonic readings are per coordinator boot.",
  ];
  if (link !== undefined) lines.push('', `Open in the dashboard: ${link}`);
  return lines.join('\n') + '\n';
}

function generationRow(
  role: string,
  holderId: string,
  fence: number,
  g: Generation | undefined,
  investigation: Investigation,
): string {
  if (g === undefined) return `| ${role} | ${holderId} | ${fence} | not in the loaded log | | | |`;
  const start =
    g.granted === undefined ? `${formatWallTime(g.startWallMillis)} (first seen)` : formatWallTime(g.startWallMillis);
  const end =
    g.end === undefined
      ? `expires ${formatWallTime(g.endWallMillis)} (projected at the refusal)`
      : formatWallTime(g.endWallMillis);
  const carried = g.carried.length > 0 ? `, carried across ${g.carried.length} restart(s)` : '';
  const after = describeAfterRefusal(afterRefusal(investigation, g)) ?? '';
  return `| ${role} | ${g.holderId} | ${g.fence} | ${start} | ${end} | ${g.end?.kind ?? 'open at the refusal'}${carried} | ${after} |`;
}
