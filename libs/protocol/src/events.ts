/**
 * The coordinator's event log schema: the one copy, shared by the coordinator (which writes and
 * replays it), the SDK and the dashboard (which fold it for display).
 *
 * Every event is `{ type, version, data }`. Inside `data`:
 * - `bootId` names the coordinator boot whose monotonic clock took `atMillis`: it is the clock
 *   domain of every `*Millis` instant in the same event (`atMillis`, `expiresAtMillis`, …).
 *   Readings of different boots are never compared; recovery re-anchors live leases instead.
 * - `wallMillis` is wall-clock epoch milliseconds, for display only. No rule reads it.
 *
 * Adding a field or an event type bumps `version` of that event; old versions are upcast in
 * `coordinator-core`'s codec, never rewritten in the log.
 *
 * @see docs/design.md § "The event-sourced coordinator" (Events)
 */
import { ID_PATTERN, ID_PROBLEMS, MAX_ID_LENGTH } from 'lease-fence';
import { z } from 'zod';

/** Longest accepted resource, holder, gate or request id, in characters: lease-fence's `MAX_ID_LENGTH`. */
export { MAX_ID_LENGTH };

/**
 * An identifier, by lease-fence's id rule (its `isId`, the one copy): 1 to
 * {@link MAX_ID_LENGTH} printable ASCII characters, no space at either end. Resource names may
 * contain `/` and `:` (for example `repo:web/deploy-slot`). Built from the rule's constants so
 * the JSON schema (OpenAPI) shows `maxLength` and `pattern`; the messages are its `ID_PROBLEMS`.
 */
export const IdSchema = z
  .string({ error: 'must be a string' })
  .min(1, ID_PROBLEMS.empty)
  .max(MAX_ID_LENGTH, ID_PROBLEMS.tooLong)
  .regex(ID_PATTERN, ID_PROBLEMS.notPrintable);

/** A fencing token's number: a positive safe integer. */
export const FenceSchema = z
  .number()
  .positive('must be positive')
  .max(Number.MAX_SAFE_INTEGER, `is out of range: a fence is at most ${Number.MAX_SAFE_INTEGER}`)
  .int('must be an integer');

/** A monotonic reading or duration in milliseconds: a finite, non-negative number. */
export const MillisSchema = z.number().finite().nonnegative();

/** Who held what: the pair a FenceGate compares. */
export const HolderFenceSchema = z.object({ holderId: IdSchema, fence: FenceSchema });
/** The parsed shape of {@link HolderFenceSchema}. */
export type HolderFence = z.infer<typeof HolderFenceSchema>;

/** Fields every event carries: the boot (clock domain), its monotonic reading, and wall time. */
const stamp = {
  /** The coordinator boot that wrote the event; the clock domain of every `*Millis` instant in it. */
  bootId: IdSchema,
  /** The coordinator's monotonic reading when it decided the event (milliseconds, `bootId` domain). */
  atMillis: MillisSchema,
  /** Wall-clock epoch milliseconds: display only, never decides safety. */
  wallMillis: MillisSchema,
};

/** A lease carried across a restart, re-anchored into the new boot's clock domain. */
export const CarriedLeaseSchema = z.object({
  resource: IdSchema,
  holderId: IdSchema,
  fence: FenceSchema,
  /** The grace deadline of this lease in the new boot's domain (`bootId` of the event). */
  expiresAtMillis: MillisSchema,
});
/** The parsed shape of {@link CarriedLeaseSchema}. */
export type CarriedLease = z.infer<typeof CarriedLeaseSchema>;

/**
 * Appended once per boot, after replay. `recoveredFence` is the highest fence ever issued
 * (burned fences included); `carriedLeases` are the leases live at the crash, honoured until
 * their grace deadline. Emitted by recovery.
 */
export const CoordinatorStartedSchema = z.object({
  type: z.literal('CoordinatorStarted'),
  version: z.literal(1),
  data: z.object({
    ...stamp,
    namespace: IdSchema,
    /** Boot id of the previous writer, absent on a fresh log. */
    previousBootId: IdSchema.optional(),
    recoveredFence: z.number().int().nonnegative(),
    eventsReplayed: z.number().int().nonnegative(),
    /** Whether replay started from a snapshot. */
    fromSnapshot: z.boolean(),
    /** Wall milliseconds recovery took, from open to ready (display only). */
    replayMillis: MillisSchema,
    /** Latest grace deadline among carried leases (this boot's domain); equals `atMillis` when none. */
    graceDeadlineMillis: MillisSchema,
    carriedLeases: z.array(CarriedLeaseSchema),
  }),
});

/** A new generation of ownership: `fence` is strictly above every fence issued before. */
export const LeaseGrantedSchema = z.object({
  type: z.literal('LeaseGranted'),
  version: z.literal(1),
  data: z.object({
    ...stamp,
    resource: IdSchema,
    holderId: IdSchema,
    fence: FenceSchema,
    requestId: IdSchema,
    ttlMillis: z.number().int().positive(),
    /** Coordinator-side expiry, `atMillis + ttlMillis` (milliseconds, `bootId` domain). */
    expiresAtMillis: MillisSchema,
  }),
});

/** The holder extended its lease; the fence is unchanged. */
export const LeaseRenewedSchema = z.object({
  type: z.literal('LeaseRenewed'),
  version: z.literal(1),
  data: z.object({
    ...stamp,
    resource: IdSchema,
    holderId: IdSchema,
    fence: FenceSchema,
    requestId: IdSchema,
    ttlMillis: z.number().int().positive(),
    expiresAtMillis: MillisSchema,
  }),
});

/** The holder gave the lease back before its expiry. */
export const LeaseReleasedSchema = z.object({
  type: z.literal('LeaseReleased'),
  version: z.literal(1),
  data: z.object({ ...stamp, resource: IdSchema, holderId: IdSchema, fence: FenceSchema }),
});

/** The coordinator's expiry passed without renewal; that generation can never be renewed again. */
export const LeaseExpiredSchema = z.object({
  type: z.literal('LeaseExpired'),
  version: z.literal(1),
  data: z.object({ ...stamp, resource: IdSchema, holderId: IdSchema, fence: FenceSchema }),
});

/**
 * A resource's FenceGate refused a write and reported it. `kind: 'stale'` = fence below the
 * floor; `kind: 'double-grant'` = same fence, different holder (evidence of a double grant).
 * `seq` is the gate's own sequence number; (gateId, resource, seq) is the idempotency key.
 */
export const FenceRejectedSchema = z.object({
  type: z.literal('FenceRejected'),
  version: z.literal(1),
  data: z.object({
    ...stamp,
    resource: IdSchema,
    /** The authenticated gate that reported it. */
    gateId: IdSchema,
    seq: z.number().int().nonnegative(),
    kind: z.enum(['stale', 'double-grant']),
    rejected: HolderFenceSchema,
    current: HolderFenceSchema,
    /** When the gate refused it, by the gate's wall clock (display only). */
    gateWallMillis: MillisSchema.optional(),
  }),
});

/**
 * Evidence that a gate's refusals were lost: a gate's report for `resource` carried a `seq` above
 * the next one expected. A gate numbers its refusals of a resource from 1 without gaps and
 * reports them in order, so seqs `fromSeq` to `throughSeq` (inclusive) were refused by the gate
 * and never reached the coordinator (a gate that lost its outbox, or a report refused for good).
 * Appended just before the `FenceRejected` of the report that revealed the gap (`reportedSeq`).
 */
export const RejectionsMissingSchema = z.object({
  type: z.literal('RejectionsMissing'),
  version: z.literal(1),
  data: z.object({
    ...stamp,
    resource: IdSchema,
    /** The authenticated gate whose refusals are missing. */
    gateId: IdSchema,
    /** The first missing seq: the one after the highest seq recorded for this gate and resource (1 when none). */
    fromSeq: z.number().int().positive(),
    /** The last missing seq (inclusive): `reportedSeq - 1`. */
    throughSeq: z.number().int().positive(),
    /** The seq of the report that revealed the gap. */
    reportedSeq: z.number().int().positive(),
  }),
});

/** A gate's floor was raised to `fence` without a write (handover push). */
export const FenceAdmittedSchema = z.object({
  type: z.literal('FenceAdmitted'),
  version: z.literal(1),
  data: z.object({ ...stamp, resource: IdSchema, gateId: IdSchema, holderId: IdSchema, fence: FenceSchema }),
});

/**
 * A gate reported a floor (`fence`, admitted for `holderId`) above every fence this log ever
 * issued for `resource`: fences were issued that the log no longer holds (it was lost, or
 * restored from an old backup). The resource's highest fence rises to `fence` and the fence
 * counter to `raisedTo` (at least `fence` plus the configured margin for fences issued after it
 * that no gate reported), so no fence issued before the loss is issued again.
 */
export const FenceFloorReportedSchema = z.object({
  type: z.literal('FenceFloorReported'),
  version: z.literal(1),
  data: z.object({
    ...stamp,
    resource: IdSchema,
    gateId: IdSchema,
    holderId: IdSchema,
    fence: FenceSchema,
    raisedTo: FenceSchema,
  }),
});

/**
 * Fence-first handover (`LEASE_FENCE_FENCE_FIRST`): `fence` is reserved for `holderId`'s acquire
 * on `resource` before any gate is asked to admit it. The fence counter rises to it at once, so
 * the fence is never issued again, whatever follows. It ends as `FenceAdmitted` + `LeaseGranted`
 * (a gate durably raised its floor to it) or as `FenceBurned`. While it is pending, the resource
 * is held by nobody and no other acquire on it is granted.
 */
export const FenceReservedSchema = z.object({
  type: z.literal('FenceReserved'),
  version: z.literal(1),
  data: z.object({
    ...stamp,
    resource: IdSchema,
    holderId: IdSchema,
    fence: FenceSchema,
    requestId: IdSchema,
    /** The TTL the lease gets once active (milliseconds, counted from activation). */
    ttlMillis: z.number().int().positive(),
    /** When the coordinator stops waiting for a gate and burns the fence (milliseconds, `bootId` domain). */
    deadlineMillis: MillisSchema,
  }),
});

/**
 * A reserved fence will never be granted: no gate of the resource admitted it before the
 * deadline (`fence-unavailable`), or the coordinator restarted while it was pending
 * (`coordinator-restarted`: a gate may have raised its floor to it, so it is burned, not reused).
 */
export const FenceBurnedSchema = z.object({
  type: z.literal('FenceBurned'),
  version: z.literal(1),
  data: z.object({
    ...stamp,
    resource: IdSchema,
    holderId: IdSchema,
    fence: FenceSchema,
    requestId: IdSchema,
    reason: z.enum(['fence-unavailable', 'coordinator-restarted']),
  }),
});

/** A snapshot of the state after `coversPosition` events was saved beside the log. */
export const SnapshotTakenSchema = z.object({
  type: z.literal('SnapshotTaken'),
  version: z.literal(1),
  data: z.object({ ...stamp, coversPosition: z.number().int().nonnegative() }),
});

/**
 * A periodic uptime checkpoint, written while leases are live and nothing else was written for
 * a while. Recovery uses the latest reading of the dead boot to shorten carried leases' grace,
 * so fast restarts cannot keep a dead lease alive.
 */
export const CoordinatorCheckpointedSchema = z.object({
  type: z.literal('CoordinatorCheckpointed'),
  version: z.literal(1),
  data: z.object({ ...stamp }),
});

/** Any event of the log. Discriminated on `type`. */
export const CoordinatorEventSchema = z.discriminatedUnion('type', [
  CoordinatorStartedSchema,
  LeaseGrantedSchema,
  LeaseRenewedSchema,
  LeaseReleasedSchema,
  LeaseExpiredSchema,
  FenceRejectedSchema,
  RejectionsMissingSchema,
  FenceAdmittedSchema,
  SnapshotTakenSchema,
  CoordinatorCheckpointedSchema,
  FenceFloorReportedSchema,
  FenceReservedSchema,
  FenceBurnedSchema,
]);

/** The parsed shape of {@link CoordinatorEventSchema}. */
export type CoordinatorEvent = z.infer<typeof CoordinatorEventSchema>;
/** The name of an event type, e.g. `'LeaseGranted'`. */
export type CoordinatorEventType = CoordinatorEvent['type'];
/** The parsed shape of {@link CoordinatorStartedSchema}. */
export type CoordinatorStarted = z.infer<typeof CoordinatorStartedSchema>;
/** The parsed shape of {@link LeaseGrantedSchema}. */
export type LeaseGranted = z.infer<typeof LeaseGrantedSchema>;
/** The parsed shape of {@link LeaseRenewedSchema}. */
export type LeaseRenewed = z.infer<typeof LeaseRenewedSchema>;
/** The parsed shape of {@link LeaseReleasedSchema}. */
export type LeaseReleased = z.infer<typeof LeaseReleasedSchema>;
/** The parsed shape of {@link LeaseExpiredSchema}. */
export type LeaseExpired = z.infer<typeof LeaseExpiredSchema>;
/** The parsed shape of {@link FenceRejectedSchema}. */
export type FenceRejected = z.infer<typeof FenceRejectedSchema>;
/** The parsed shape of {@link RejectionsMissingSchema}. */
export type RejectionsMissing = z.infer<typeof RejectionsMissingSchema>;
/** The parsed shape of {@link FenceAdmittedSchema}. */
export type FenceAdmitted = z.infer<typeof FenceAdmittedSchema>;
/** The parsed shape of {@link SnapshotTakenSchema}. */
export type SnapshotTaken = z.infer<typeof SnapshotTakenSchema>;
/** The parsed shape of {@link CoordinatorCheckpointedSchema}. */
export type CoordinatorCheckpointed = z.infer<typeof CoordinatorCheckpointedSchema>;
/** The parsed shape of {@link FenceFloorReportedSchema}. */
export type FenceFloorReported = z.infer<typeof FenceFloorReportedSchema>;
/** The parsed shape of {@link FenceReservedSchema}. */
export type FenceReserved = z.infer<typeof FenceReservedSchema>;
/** The parsed shape of {@link FenceBurnedSchema}. */
export type FenceBurned = z.infer<typeof FenceBurnedSchema>;
/** The event of one type, e.g. `EventOf<'LeaseGranted'>`. */
export type EventOf<T extends CoordinatorEventType> = Extract<CoordinatorEvent, { type: T }>;

/** Every event type name, in the order of the schema. */
export const COORDINATOR_EVENT_TYPES = CoordinatorEventSchema.options.map(
  (o) => o.shape.type.value,
) as readonly CoordinatorEventType[];

/**
 * An event as stored in and read from a log: its 1-based `position` (the first event of a log
 * is position 1; version N means N events), and the event itself. `recordedAtMillis` is wall
 * time of the append, display only.
 */
export const RecordedEventSchema = z.object({
  position: z.number().int().positive(),
  recordedAtMillis: MillisSchema,
  event: CoordinatorEventSchema,
});
/** The parsed shape of {@link RecordedEventSchema}. */
export type RecordedEvent = z.infer<typeof RecordedEventSchema>;

/**
 * A recorded rejection as the coordinator keeps it for display: the `FenceRejected` data and the
 * log position of the event.
 */
export const RecordedRejectionSchema = FenceRejectedSchema.shape.data.extend({ position: z.number().int().positive() });
/** The parsed shape of {@link RecordedRejectionSchema}. */
export type RecordedRejection = z.infer<typeof RecordedRejectionSchema>;

/**
 * Current `schemaVersion` of {@link CoordinatorSnapshotStateSchema}. 2 added `lockDelays`; a
 * snapshot of another version is not restored (recovery replays the whole log instead).
 */
export const COORDINATOR_SNAPSHOT_SCHEMA_VERSION = 2;

/**
 * The coordinator's state as saved in a snapshot beside the log (`schemaVersion`
 * {@link COORDINATOR_SNAPSHOT_SCHEMA_VERSION}): the fold of the first `position` events.
 * Instants in `boot` and `table` are in `boot.bootId`'s domain. `table` is `lease-fence`'s
 * `LeaseTable.toJSON()` form, validated by `LeaseTable.fromJSON` when restored.
 * A snapshot is an optimisation: the log stays complete.
 */
export const CoordinatorSnapshotStateSchema = z.object({
  /** Number of events folded into this state. */
  position: z.number().int().nonnegative(),
  namespace: IdSchema.optional(),
  /** The boot that wrote the last folded event: its id, when it started, its latest reading, its grace deadline (its domain). */
  boot: z
    .object({
      bootId: IdSchema,
      startedAtMillis: MillisSchema,
      lastAtMillis: MillisSchema,
      graceDeadlineMillis: MillisSchema,
    })
    .optional(),
  /** Leases carried across the last restart and still in their grace period (not renewed since). */
  carried: z.array(z.object({ resource: IdSchema, fence: FenceSchema })),
  /** Idempotency keys of recently recorded rejections, oldest first. */
  rejectionKeys: z.array(z.string()),
  /** Recently recorded rejections, oldest first. */
  rejections: z.array(RecordedRejectionSchema),
  /**
   * Per gate and resource, the highest rejection seq recorded or declared missing (the next
   * expected report is this + 1), and the `missing` seqs not reported since as `[fromSeq,
   * throughSeq]` ranges. Absent in snapshots written before gap detection, `missing` in those
   * written before it was kept (such a snapshot is not used: the log is replayed).
   */
  rejectionSeqs: z
    .array(
      z.object({
        gateId: IdSchema,
        resource: IdSchema,
        highestSeq: z.number().int().nonnegative(),
        missing: z.array(z.tuple([z.number().int().positive(), z.number().int().positive()])).optional(),
      }),
    )
    .optional(),
  /** Position of the last `SnapshotTaken` event folded (0 = none). */
  lastSnapshotPosition: z.number().int().nonnegative(),
  /** Fence-first reservations pending at the snapshot (`FenceReserved` not yet granted or burned); absent = none. */
  reservations: z
    .array(
      z.object({
        resource: IdSchema,
        holderId: IdSchema,
        fence: FenceSchema,
        requestId: IdSchema,
        ttlMillis: z.number().int().positive(),
        deadlineMillis: MillisSchema,
      }),
    )
    .optional(),
  /** Per resource, the highest fence fence-first handover ever reserved for it; absent = none. */
  reservedFences: z.array(z.object({ resource: IdSchema, fence: FenceSchema })).optional(),
  table: z.unknown(),
  /**
   * Lock-delay anchors: each resource whose latest holder was lost uncleanly (expired, or a write
   * refused) since its latest grant, with the reading of that loss in `boot.bootId`'s domain
   * (negative when it happened before that boot started).
   */
  lockDelays: z.array(z.object({ resource: IdSchema, lostAtMillis: z.number().finite() })),
});
/** The parsed shape of {@link CoordinatorSnapshotStateSchema}. */
export type CoordinatorSnapshotState = z.infer<typeof CoordinatorSnapshotStateSchema>;
