/**
 * The events around the view's position (the shared cursor's position when one is set), in log order.
 */
import type { RecordedEvent } from '@lease-fence/protocol';
import { memo, useMemo, type ReactElement } from 'react';
import { shortBootId, wallTimeColumn } from '@lease-fence/dashboard-model';

/** Props of {@link EventTable}. */
export interface EventTableProps {
  readonly events: readonly RecordedEvent[];
  /** The position to highlight. */
  readonly focusPosition: number | undefined;
  readonly onPick: (position: number) => void;
  readonly caption: string;
}

/** Summary columns of any event: resource, holder, fence. */
export function eventSummary(recorded: RecordedEvent): {
  resource: string;
  holder: string;
  fence: string;
  detail: string;
} {
  const { event } = recorded;
  switch (event.type) {
    case 'LeaseGranted':
    case 'LeaseRenewed':
      return {
        resource: event.data.resource,
        holder: event.data.holderId,
        fence: String(event.data.fence),
        detail: `${event.data.requestId} · TTL ${event.data.ttlMillis} ms`,
      };
    case 'LeaseReleased':
    case 'LeaseExpired':
      return {
        resource: event.data.resource,
        holder: event.data.holderId,
        fence: String(event.data.fence),
        detail: '',
      };
    case 'FenceRejected':
      return {
        resource: event.data.resource,
        holder: event.data.rejected.holderId,
        fence: `${event.data.rejected.fence} < ${event.data.current.fence}`,
        detail: `gate ${event.data.gateId} seq ${event.data.seq} · floor ${event.data.current.holderId}`,
      };
    case 'RejectionsMissing':
      return {
        resource: event.data.resource,
        holder: '',
        fence: '',
        detail: `gate ${event.data.gateId} seq ${seqRange(event.data.fromSeq, event.data.throughSeq)} never reported (revealed by seq ${event.data.reportedSeq})`,
      };
    case 'FenceAdmitted':
      return {
        resource: event.data.resource,
        holder: event.data.holderId,
        fence: String(event.data.fence),
        detail: `gate ${event.data.gateId}`,
      };
    case 'FenceFloorReported':
      return {
        resource: event.data.resource,
        holder: event.data.holderId,
        fence: String(event.data.fence),
        detail: `gate ${event.data.gateId} · counter raised to ${event.data.raisedTo}`,
      };
    case 'FenceReserved':
      return {
        resource: event.data.resource,
        holder: event.data.holderId,
        fence: String(event.data.fence),
        detail: `${event.data.requestId} · waiting for a gate`,
      };
    case 'FenceBurned':
      return {
        resource: event.data.resource,
        holder: event.data.holderId,
        fence: String(event.data.fence),
        detail: `burned: ${event.data.reason}`,
      };
    case 'CoordinatorStarted':
      return {
        resource: '',
        holder: '',
        fence: String(event.data.recoveredFence),
        detail: `boot ${shortBootId(event.data.bootId)} · ${event.data.carriedLeases.length} carried · ${event.data.eventsReplayed} replayed`,
      };
    case 'SnapshotTaken':
      return { resource: '', holder: '', fence: '', detail: `covers ${event.data.coversPosition}` };
    case 'CoordinatorCheckpointed':
      return { resource: '', holder: '', fence: '', detail: `boot ${shortBootId(event.data.bootId)}` };
  }
}

/** `7` or `7–9`: an inclusive range of rejection seqs. */
export const seqRange = (fromSeq: number, throughSeq: number): string =>
  fromSeq === throughSeq ? String(fromSeq) : `${fromSeq}–${throughSeq}`;

/** A table of log events (memoised: it renders when its props change, not with every loaded batch). */
export const EventTable = memo(function EventTable({
  events,
  focusPosition,
  onPick,
  caption,
}: EventTableProps): ReactElement {
  const wall = useMemo(
    () =>
      wallTimeColumn(
        'wall',
        events.map((e) => e.event.data.wallMillis),
      ),
    [events],
  );
  return (
    <section className="panel events" aria-label="Events">
      <h3>{caption}</h3>
      <div className="table-scroll-x">
        <table data-testid="event-table">
          <thead>
            <tr>
              <th>position</th>
              <th>type</th>
              <th>resource</th>
              <th>holder</th>
              <th>fence</th>
              <th>{wall.header}</th>
              <th>detail</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e, i) => {
              const s = eventSummary(e);
              return (
                <tr
                  // Keyed by the row's index, not the event's position: while live the events
                  // around the head change with every refresh (four a second), and each <tr> then
                  // keeps its place with new text instead of being removed and re-inserted.
                  key={i}
                  data-testid="event-row"
                  data-position={e.position}
                  data-type={e.event.type}
                  className={e.position === focusPosition ? 'selected' : undefined}
                  onClick={() => onPick(e.position)}
                >
                  <td>{e.position}</td>
                  <td>{e.event.type}</td>
                  <td title={s.resource}>{s.resource}</td>
                  <td title={s.holder}>{s.holder}</td>
                  <td>{s.fence}</td>
                  <td>{wall.format(e.event.data.wallMillis)}</td>
                  <td className="muted detail" title={s.detail}>
                    {s.detail}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
});
