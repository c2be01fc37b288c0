/**
 * The whole lease under the pointer (or at `?resource=X&at=T`): holder, generation, fence, start,
 * expiry or release, renewals and restarts, each time with the clock it comes from, and a live
 * countdown while the lease is open.
 */
import { useEffect, useState, type ReactElement } from 'react';
import {
  describeStamp,
  formatDuration,
  formatMonotonic,
  formatWallTime,
  reportedLate,
  shortBootId,
  type HoldingAnswer,
  type Generation,
} from '@lease-fence/dashboard-model';
import { describeExposure } from '../exposure/describe-exposure.js';
import type { MarkerCluster } from './lane-layout.js';

/** Props of {@link LeaseDetails}. */
export interface LeaseDetailsProps {
  readonly answer: HoldingAnswer;
  /** Estimated coordinator wall time now (epoch ms), for the countdown; undefined in history views. */
  readonly nowWallMillis: (() => number) | undefined;
}

/** Who held the resource at the time, and everything about that generation. */
export function LeaseDetails({ answer, nowWallMillis }: LeaseDetailsProps): ReactElement {
  if (!answer.held) {
    return (
      <div className="lease-details" data-testid="lease-details" data-held="false">
        <strong>{answer.resource}</strong> at {formatWallTime(answer.wallMillis)} wall
        <div>
          {answer.reason === 'unknown-resource' ? 'No event about this resource is loaded.' : 'Nobody held it.'}
        </div>
        {answer.previous !== undefined && (
          <div>
            Before: {answer.previous.holderId} (fence {answer.previous.fence}) until{' '}
            {formatWallTime(answer.previous.endWallMillis)}
          </div>
        )}
        {answer.next !== undefined && (
          <div>
            After: {answer.next.holderId} (fence {answer.next.fence}) from {formatWallTime(answer.next.startWallMillis)}
          </div>
        )}
      </div>
    );
  }
  return (
    <GenerationDetails
      generation={answer.generation}
      ordinal={answer.ordinal}
      probeWallMillis={answer.wallMillis}
      nowWallMillis={nowWallMillis}
    />
  );
}

/** Props of {@link GenerationDetails}. */
export interface GenerationDetailsProps {
  readonly generation: Generation;
  /** 1-based number of the generation on its lane, when known. */
  readonly ordinal?: number | undefined;
  readonly probeWallMillis?: number | undefined;
  readonly nowWallMillis: (() => number) | undefined;
}

/** One generation, with the clock of every time. */
export function GenerationDetails({
  generation: g,
  ordinal,
  probeWallMillis,
  nowWallMillis,
}: GenerationDetailsProps): ReactElement {
  const open = g.end === undefined;
  const now = useNow(open ? nowWallMillis : undefined);
  const exposure = describeExposure(g);
  return (
    <div
      className="lease-details"
      data-testid="lease-details"
      data-held="true"
      data-holder={g.holderId}
      data-fence={g.fence}
    >
      <div className="lease-title">
        <strong>{g.holderId}</strong> held <strong>{g.resource}</strong> with fence <strong>{g.fence}</strong>
        {ordinal !== undefined && <span className="muted"> · generation #{ordinal} of this lane</span>}
      </div>
      {probeWallMillis !== undefined && <div className="muted">at {formatWallTime(probeWallMillis)} wall</div>}
      <dl>
        <dt>granted</dt>
        <dd>
          {g.granted === undefined
            ? `not in the loaded log (first seen ${describeStamp(g.firstSeen)})`
            : describeStamp(g.granted)}
        </dd>
        {g.requestId !== undefined && (
          <>
            <dt>request</dt>
            <dd>
              {g.requestId}
              {g.ttlMillis !== undefined && ` · TTL ${formatDuration(g.ttlMillis)}`}
            </dd>
          </>
        )}
        <dt>renewals</dt>
        <dd>
          {g.renewalPositions.length}
          {g.renewalPositions.length > 0 &&
            ` · last at position ${g.renewalPositions[g.renewalPositions.length - 1]} (${formatWallTime(g.renewalWallMillis[g.renewalWallMillis.length - 1] ?? Number.NaN)} wall)`}
        </dd>
        {g.expiry !== undefined && (
          <>
            <dt>{open ? 'expires' : 'expiry was'}</dt>
            <dd>
              {formatWallTime(g.expiry.wallMillis)} wall (projected) · coordinator boot {shortBootId(g.expiry.bootId)}{' '}
              expiresAt +{formatMonotonic(g.expiry.expiresAtMillis)} monotonic · set by{' '}
              {g.expiry.source === 'carried'
                ? 'the restart'
                : `the ${g.expiry.source === 'granted' ? 'grant' : 'renewal'}`}{' '}
              at position {g.expiry.setBy.position}
              {open && now !== undefined && (
                <span className="countdown" data-testid="countdown">
                  {' '}
                  ·{' '}
                  {g.expiry.wallMillis - now >= 0
                    ? `expires in ${formatDuration(g.expiry.wallMillis - now)}`
                    : `past expiry by ${formatDuration(now - g.expiry.wallMillis)}, not yet swept`}
                </span>
              )}
            </dd>
          </>
        )}
        {g.end !== undefined && (
          <>
            <dt>{endLabel(g)}</dt>
            <dd>
              bar ends {formatWallTime(g.endWallMillis)} wall · logged {describeStamp(g.end.stamp)}
            </dd>
          </>
        )}
        {exposure !== undefined && (
          <>
            <dt>exposure</dt>
            <dd data-testid="lease-exposure" data-status={g.exposure?.status}>
              {exposure}
            </dd>
          </>
        )}
        {g.carried.length > 0 && (
          <>
            <dt>carried</dt>
            <dd>
              across{' '}
              {g.carried.map((c) => `restart into boot ${shortBootId(c.bootId)} (position ${c.position})`).join(', ')}
            </dd>
          </>
        )}
      </dl>
    </div>
  );
}

/** Props of {@link RejectionDetails}. */
export interface RejectionDetailsProps {
  readonly cluster: MarkerCluster;
}

/** A rejection marker (or cluster) under the pointer. */
export function RejectionDetails({ cluster }: RejectionDetailsProps): ReactElement {
  const r = cluster.first;
  return (
    <div className="lease-details" data-testid="rejection-details">
      {cluster.count > 1 && (
        <div>
          <strong>{cluster.count} rejections</strong> here (positions {cluster.first.stamp.position}…
          {cluster.last.stamp.position}); click for the first, zoom in to separate them.
        </div>
      )}
      <div>
        <strong>{r.kind === 'double-grant' ? 'Double grant refused' : 'Stale write refused'}</strong> by gate {r.gateId}{' '}
        (seq {r.seq}) on {r.resource}
      </div>
      <div>
        refused {r.rejected.holderId} with fence {r.rejected.fence}; floor {r.current.fence} held by{' '}
        {r.current.holderId}
      </div>
      <div className="muted">
        recorded {describeStamp(r.stamp)}
        {r.gateWallMillis !== undefined && ` · gate wall clock ${formatWallTime(r.gateWallMillis)}`}
      </div>
      {reportedLate(r) && (
        <div data-testid="reported-late">
          Reported late: gate {r.gateId} refused the write at {formatWallTime(r.gateWallMillis as number)} by its own
          clock and its outbox delivered the refusal once the coordinator was back, so the marker (a ring) stands where
          the coordinator recorded it.
        </div>
      )}
      {cluster.count > 1 && cluster.reportedLate > 0 && (
        <div className="muted">
          {cluster.reportedLate} of the {cluster.count} were reported late by their gate.
        </div>
      )}
      <div className="muted">Click to investigate.</div>
    </div>
  );
}

function endLabel(g: Generation): string {
  switch (g.end?.kind) {
    case 'released':
      return 'released';
    case 'expired':
      return 'expired';
    case 'superseded':
      return 'superseded';
    case 'not-carried':
      return 'dropped at restart';
    default:
      return 'ended';
  }
}

/** Re-renders every 100 ms while a clock is given (the countdown of an open lease). */
function useNow(now: (() => number) | undefined): number | undefined {
  // A tick counter re-renders; the time itself is read from the clock at render.
  const [, setTicks] = useState(0);
  useEffect(() => {
    if (now === undefined) return undefined;
    const id = setInterval(() => setTicks((ticks) => ticks + 1), 100);
    return () => clearInterval(id);
  }, [now]);
  return now?.();
}
