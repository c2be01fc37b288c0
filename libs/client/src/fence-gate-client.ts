/**
 * A resource's connection to the coordinator, authenticated with a gate token: reports the
 * writes its {@link FenceGate} refused, and the floors it admitted. A request rides only on a
 * connection that answered within the last 500 ms, or a new one (`recent-connection-fetch.ts`): a
 * report never waits out its timeout on a pooled connection that a partition left silent while the
 * coordinator (or the standby that took over behind the same URL) answers on a new one, and a burst
 * of reports does not pay a handshake each.
 *
 * @see docs/design.md § "The library's rules" (FenceGate)
 */
import {
  REJECTION_BATCH_MAX_BODY_BYTES,
  REJECTION_BATCH_MAX_ITEMS,
  RejectionBatchReplySchema,
  type RejectionBatchBody,
  type RejectionBatchItem,
  type RejectionBatchReply,
  FloorReportReplySchema,
  GateRecoveryReplySchema,
  OkReplySchema,
  RejectionAcceptedReplySchema,
  type AdmitBody,
  type FloorReportBody,
  type GateRecoveryReply,
  type GateStatusBody,
  type RejectionBody,
} from '@lease-fence/protocol';
import type { FenceToken, GateFloor, RejectionRecord } from 'lease-fence';
import { CoordinatorHttp, type CoordinatorHttpOptions, type ReplySchemas } from './coordinator-http.js';
import { CoordinatorReplyError } from './errors.js';
import type { CoordinatorGateView } from './floor-store.js';
import { recentConnectionFetch } from './recent-connection-fetch.js';

const REJECTION_REPLIES: ReplySchemas<{ ok: true; duplicate: boolean }> = { 202: RejectionAcceptedReplySchema };
const REJECTION_BATCH_REPLIES: ReplySchemas<RejectionBatchReply> = { 202: RejectionBatchReplySchema };

/** A refusal as a report carries it: the record's fields (copied, nothing else of it) and the gate's wall time if known (ms). */
const reportItemOf = (rejection: RejectionRecord, wallMillis: number | undefined): RejectionBatchItem => ({
  seq: rejection.seq,
  kind: rejection.kind,
  rejected: { holderId: rejection.rejected.holderId, fence: rejection.rejected.fence },
  current: { holderId: rejection.current.holderId, fence: rejection.current.fence },
  ...(wallMillis === undefined ? {} : { wallMillis }),
});

/** What the coordinator decided for one refusal of a batch ({@link FenceGateClient.reportRejectionBatch}). */
export type RejectionBatchOutcome = RejectionBatchReply['items'][number];
const ADMIT_REPLIES: ReplySchemas<{ ok: true }> = { 200: OkReplySchema, 202: OkReplySchema };
const STATUS_REPLIES: ReplySchemas<{ ok: true }> = { 202: OkReplySchema };
const RECOVERY_REPLIES: ReplySchemas<GateRecoveryReply> = { 200: GateRecoveryReplySchema };
const FLOOR_REPLIES: ReplySchemas<{ ok: true; raised: boolean; fenceCounter: number }> = {
  202: FloorReportReplySchema,
};

/** Options of {@link FenceGateClient}: connection settings with a gate token. */
export type FenceGateClientOptions = CoordinatorHttpOptions;

/**
 * Sends a gate's reports to the coordinator. Each call retries transient failures (network,
 * timeout, 503) like the agent client; the coordinator deduplicates rejections by
 * (gate, resource, seq), so a retry after a lost reply is recorded once.
 */
export class FenceGateClient {
  readonly #http: CoordinatorHttp;

  /**
   * @throws TypeError / RangeError on bad options (see {@link CoordinatorHttpOptions}).
   */
  constructor(options: FenceGateClientOptions) {
    this.#http = new CoordinatorHttp('FenceGateClient', options, recentConnectionFetch);
  }

  /**
   * Reports one refused write (`POST /v1/resources/:resource/rejections`).
   * @param rejection - The gate's record, as `FenceGate` made it.
   * @param options - `wallMillis`: when the gate refused it, epoch milliseconds (display only).
   * @returns `duplicate: true` when the coordinator had already recorded this (gate, resource, seq).
   * @throws {@link CoordinatorUnreachableError} / {@link CoordinatorUnavailableError} / {@link CoordinatorHttpError} / {@link CoordinatorReplyError}.
   */
  async reportRejection(
    rejection: RejectionRecord,
    options: { readonly wallMillis?: number; readonly signal?: AbortSignal } = {},
  ): Promise<{ readonly duplicate: boolean }> {
    const body: RejectionBody = { resource: rejection.resource, ...reportItemOf(rejection, options.wallMillis) };
    const { value } = await this.#http.post(
      `report rejection ${rejection.resource}#${rejection.seq}`,
      `/v1/resources/${encodeURIComponent(rejection.resource)}/rejections`,
      body,
      REJECTION_REPLIES,
      options.signal,
    );
    return { duplicate: value.duplicate };
  }

  /**
   * Reports several refused writes of one resource in one request
   * (`POST /v1/resources/:resource/rejections/batch`, one group commit on the coordinator): the
   * first of `rejections` (seq ascending) that fit in {@link REJECTION_BATCH_MAX_ITEMS} and a body
   * of {@link REJECTION_BATCH_MAX_BODY_BYTES} (always at least one).
   * @param resource - The resource every one of `rejections` is of.
   * @param rejections - The gate's records, seq strictly ascending, each with its `wallMillis` if known.
   * @returns one outcome per refusal sent, in order: a prefix of `rejections` (those that fit).
   *   `{ ok: true, duplicate }`, or `{ ok: false, reason: 'seq-conflict' }` for a seq recorded with other content.
   * @throws like {@link FenceGateClient.reportRejection}; {@link CoordinatorHttpError} 400 naming
   *   `items.<i>.<field>` when one cannot be true (nothing recorded), 404 from a coordinator older than this route.
   */
  async reportRejectionBatch(
    resource: string,
    rejections: readonly (RejectionRecord & { readonly wallMillis?: number | undefined })[],
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<readonly RejectionBatchOutcome[]> {
    const items: RejectionBatchItem[] = [];
    let bodyBytes = '{"items":[]}'.length;
    for (const rejection of rejections.slice(0, REJECTION_BATCH_MAX_ITEMS)) {
      const item = reportItemOf(rejection, rejection.wallMillis);
      const itemBytes = Buffer.byteLength(JSON.stringify(item)) + (items.length === 0 ? 0 : 1);
      if (items.length > 0 && bodyBytes + itemBytes > REJECTION_BATCH_MAX_BODY_BYTES) break;
      items.push(item);
      bodyBytes += itemBytes;
    }
    const operation = `report rejections ${resource}#${String(items[0]?.seq)}..#${String(items.at(-1)?.seq)}`;
    const body: RejectionBatchBody = { items };
    const { value } = await this.#http.post(
      operation,
      `/v1/resources/${encodeURIComponent(resource)}/rejections/batch`,
      body,
      REJECTION_BATCH_REPLIES,
      options.signal,
    );
    if (value.items.length !== items.length)
      throw new CoordinatorReplyError(
        202,
        value,
        operation,
        `${value.items.length} outcomes for ${items.length} refusals`,
      );
    return value.items;
  }

  /**
   * Tells the coordinator the gate raised its floor to `token.fence` (`POST /v1/resources/:resource/admit`).
   * @throws like {@link FenceGateClient.reportRejection}.
   */
  async reportAdmitted(token: FenceToken, options: { readonly signal?: AbortSignal } = {}): Promise<void> {
    const body: AdmitBody = { holderId: token.holderId, fence: token.fence };
    await this.#http.post(
      `report admit ${token.resource}`,
      `/v1/resources/${encodeURIComponent(token.resource)}/admit`,
      body,
      ADMIT_REPLIES,
      options.signal,
    );
  }

  /**
   * Reports the gate's current floor (`POST /v1/resources/:resource/floor`). A coordinator whose
   * log lost fences (a disk died) raises its fence counter above it, so it issues no earlier
   * fence again and its next grant passes this gate; otherwise nothing changes. Idempotent.
   * @param resource - The gate's resource.
   * @param floor - `gate.floor`: the highest fence admitted and its holder.
   * @returns `raised`: whether the coordinator learned of fences from it; `fenceCounter`: its fence counter after the report.
   * @throws like {@link FenceGateClient.reportRejection}.
   */
  async reportFloor(
    resource: string,
    floor: GateFloor,
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<{ readonly raised: boolean; readonly fenceCounter: number }> {
    const body: FloorReportBody = { holderId: floor.holderId, fence: floor.fence };
    const { value } = await this.#http.post(
      `report floor ${resource}`,
      `/v1/resources/${encodeURIComponent(resource)}/floor`,
      body,
      FLOOR_REPLIES,
      options.signal,
    );
    return { raised: value.raised, fenceCounter: value.fenceCounter };
  }

  /**
   * Reads what this gate reconciles with at its start (`GET /v1/resources/:resource/gate-recovery`):
   * the latest fence granted on `resource` (with its holder while that lease is current) and the
   * last refusal seq of this gate the coordinator recorded. Pass it to `reconcileGateState`.
   * @throws like {@link FenceGateClient.reportRejection}; {@link CoordinatorHttpError} 403 for a
   *   resource outside the gate token's patterns.
   */
  async gateRecovery(resource: string, options: { readonly signal?: AbortSignal } = {}): Promise<CoordinatorGateView> {
    const { value } = await this.#http.get(
      `gate recovery ${resource}`,
      `/v1/resources/${encodeURIComponent(resource)}/gate-recovery`,
      RECOVERY_REPLIES,
      options.signal,
    );
    return {
      latestGrant:
        value.latestGrant === null
          ? undefined
          : { fence: value.latestGrant.fence, holderId: value.latestGrant.holderId ?? undefined },
      lastRejectionSeq: value.lastRejectionSeq,
    };
  }

  /**
   * Reports the gate's status (`POST /v1/gates/status`): its floors, outbox backlog and counters,
   * kept by the coordinator in memory and served by `GET /v1/gates`. For a gate whose gate link is
   * not open (an open gate link sends it with `GateLink.sendStatus`). Observation only: nothing is
   * appended to the log.
   * @throws like {@link FenceGateClient.reportRejection}; {@link CoordinatorHttpError} 400 naming the
   *   field for a resource outside the gate token's patterns.
   */
  async reportStatus(status: GateStatusBody, options: { readonly signal?: AbortSignal } = {}): Promise<void> {
    await this.#http.post('report status', '/v1/gates/status', status, STATUS_REPLIES, options.signal);
  }
}
