/**
 * TEST DOUBLE — the `event_store.client.streams.Streams` gRPC service of the wire emulator,
 * answering with the message types generated inside `@kurrent/kurrentdb-client`, so the real
 * client (its grpc-js half for appends and subscriptions, its Rust bridge for reads) talks to it
 * as to a server.
 *
 * Emulated: `Read` of one stream (forwards / backwards, from a revision, start or end, with a
 * count) and stream subscriptions (confirmation, catch-up, `CaughtUp`, then live), `Append`
 * (client stream) and `BatchAppend` (bidirectional, by correlation id), with expected revision
 * and wrong-expected-version replies carrying the actual revision.
 * Not emulated (answered `UNIMPLEMENTED`): `$all` reads and subscriptions, server-side filters,
 * `Delete`, `Tombstone`.
 */
import { randomUUID } from 'node:crypto';
import { status, type ServerErrorResponse, type ServerWritableStream, type ServiceError } from '@grpc/grpc-js';
import { Metadata } from '@grpc/grpc-js';
import type { IStreamsServer } from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/streams_grpc_pb.js';
import streamsPb from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/streams_pb.js';
import sharedPb from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/shared_pb.js';
import statusPb from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/status_pb.js';
import anyPb from 'google-protobuf/google/protobuf/any_pb.js';
import emptyPb from 'google-protobuf/google/protobuf/empty_pb.js';
import timestampPb from 'google-protobuf/google/protobuf/timestamp_pb.js';
import type { ExpectedRevision, ProposedEvent, StoredEvent, StreamStore } from './stream-store.js';

type ReadReq = streamsPb.ReadReq;
type ReadResp = streamsPb.ReadResp;

/** `google.rpc.Code.FAILED_PRECONDITION`, the code the server puts on a batch append's wrong-expected-version status. */
const FAILED_PRECONDITION = 9;
const WRONG_EXPECTED_VERSION_TYPE = 'event_store.client.WrongExpectedVersion';

/** Hooks of the Streams service, for fault injection and for tests that look at the calls. */
export interface StreamsServiceHooks {
  /** Called with the method name of every call (lets tests see which path the client took). */
  readonly onCall?: (method: string) => void;
  /** Called after an append has landed in the store and before its reply is sent. */
  readonly afterAppend?: () => void;
}

/**
 * Builds the Streams service implementation over `store`.
 * @param store - The emulator's streams.
 * @param hooks - Call recording and fault injection.
 */
export function createStreamsService(store: StreamStore, hooks: StreamsServiceHooks = {}): IStreamsServer {
  const onCall = hooks.onCall ?? (() => {});
  const afterAppend = hooks.afterAppend ?? (() => {});
  return {
    read(call) {
      onCall('Read');
      const options = call.request.getOptions();
      if (options === undefined || !options.hasStream()) {
        failStream(call, unimplemented('reads and subscriptions of $all are not emulated'));
        return;
      }
      if (options.hasFilter()) {
        failStream(call, unimplemented('server-side filters are not emulated'));
        return;
      }
      const streamOptions = options.getStream()!;
      const streamName = Buffer.from(streamOptions.getStreamIdentifier()!.getStreamName_asU8()).toString('utf8');
      const structuredIds = options.getUuidOption()?.hasStructured() ?? false;
      const from: bigint | 'start' | 'end' = streamOptions.hasRevision()
        ? BigInt(streamOptions.getRevision())
        : streamOptions.hasEnd()
          ? 'end'
          : 'start';
      if (options.hasSubscription()) {
        subscribe(store, call, streamName, from, structuredIds);
        return;
      }
      const direction =
        options.getReadDirection() === streamsPb.ReadReq.Options.ReadDirection.BACKWARDS ? 'backwards' : 'forwards';
      const events = store.read(streamName, { direction, from, maxCount: BigInt(options.getCount()) });
      if (events === undefined) {
        const notFound = new streamsPb.ReadResp.StreamNotFound();
        notFound.setStreamIdentifier(streamOptions.getStreamIdentifier());
        call.write(new streamsPb.ReadResp().setStreamNotFound(notFound));
      } else {
        for (const event of events) call.write(toReadResp(event, structuredIds));
      }
      call.end();
    },

    append(call, callback) {
      onCall('Append');
      let options: streamsPb.AppendReq.Options | undefined;
      const proposed: ProposedEvent[] = [];
      let failed = false;
      call.on('data', (request: streamsPb.AppendReq) => {
        if (request.hasOptions()) options = request.getOptions();
        const message = request.getProposedMessage();
        if (message !== undefined && !failed) {
          const event = toProposedEvent(message);
          if (typeof event === 'string') {
            failed = true;
            callback(missingMetadata(event));
          } else {
            proposed.push(event);
          }
        }
      });
      call.on('end', () => {
        if (failed) return;
        if (options === undefined) {
          callback({ code: status.INVALID_ARGUMENT, details: 'append: the first message must carry the options' });
          return;
        }
        const streamName = Buffer.from(options.getStreamIdentifier()!.getStreamName_asU8()).toString('utf8');
        const expected = expectedOfAppend(options);
        const outcome = store.append(streamName, expected, proposed);
        if (outcome.ok) afterAppend();
        const response = new streamsPb.AppendResp();
        if (outcome.ok) {
          const success = new streamsPb.AppendResp.Success();
          if (outcome.currentRevision === undefined) success.setNoStream(new sharedPb.Empty());
          else success.setCurrentRevision(outcome.currentRevision.toString());
          if (outcome.position === undefined) success.setNoPosition(new sharedPb.Empty());
          else
            success.setPosition(
              new streamsPb.AppendResp.Position()
                .setCommitPosition(outcome.position.toString())
                .setPreparePosition(outcome.position.toString()),
            );
          response.setSuccess(success);
        } else {
          response.setWrongExpectedVersion(appendWrongExpectedVersion(expected, outcome.currentRevision));
        }
        callback(null, response);
      });
    },

    batchAppend(call) {
      onCall('BatchAppend');
      const pending = new Map<string, { options: streamsPb.BatchAppendReq.Options; events: ProposedEvent[] }>();
      call.on('data', (request: streamsPb.BatchAppendReq) => {
        const correlationId = request.getCorrelationId();
        const key = uuidToString(correlationId);
        let batch = pending.get(key);
        if (batch === undefined) {
          const options = request.getOptions();
          if (options === undefined) {
            call.emit('error', {
              code: status.INVALID_ARGUMENT,
              details: 'batchAppend: the first message of a batch must carry the options',
            });
            return;
          }
          batch = { options, events: [] };
          pending.set(key, batch);
        }
        for (const message of request.getProposedMessagesList()) {
          const event = toProposedEvent(message);
          if (typeof event === 'string') {
            call.emit('error', missingMetadata(event));
            return;
          }
          batch.events.push(event);
        }
        if (!request.getIsFinal()) return;
        pending.delete(key);
        const response = batchAppendResponse(store, correlationId, batch.options, batch.events);
        if (response.hasSuccess()) afterAppend();
        call.write(response);
      });
      call.on('end', () => call.end());
    },

    delete(_call, callback) {
      onCall('Delete');
      callback(unimplemented('stream deletion is not emulated'));
    },

    tombstone(_call, callback) {
      onCall('Tombstone');
      callback(unimplemented('stream tombstones are not emulated'));
    },
  };
}

function subscribe(
  store: StreamStore,
  call: ServerWritableStream<ReadReq, ReadResp>,
  streamName: string,
  from: bigint | 'start' | 'end',
  structuredIds: boolean,
): void {
  call.write(
    new streamsPb.ReadResp().setConfirmation(
      new streamsPb.ReadResp.SubscriptionConfirmation().setSubscriptionId(randomUUID()),
    ),
  );
  // A stream subscription's start revision is exclusive: it delivers the events after it.
  const after = from === 'start' ? undefined : from;
  const unsubscribe = store.subscribe(streamName, after, (event) => call.write(toReadResp(event, structuredIds)));
  const caughtUp = new streamsPb.ReadResp.CaughtUp().setTimestamp(timestampPb.Timestamp.fromDate(new Date()));
  const last = store.lastRevision(streamName);
  if (last !== undefined) caughtUp.setStreamRevision(last.toString());
  call.write(new streamsPb.ReadResp().setCaughtUp(caughtUp));
  call.on('cancelled', unsubscribe);
  call.on('close', unsubscribe);
  call.on('error', unsubscribe);
}

function batchAppendResponse(
  store: StreamStore,
  correlationId: sharedPb.UUID | undefined,
  options: streamsPb.BatchAppendReq.Options,
  events: readonly ProposedEvent[],
): streamsPb.BatchAppendResp {
  const streamName = Buffer.from(options.getStreamIdentifier()!.getStreamName_asU8()).toString('utf8');
  const expected = expectedOfBatch(options);
  const outcome = store.append(streamName, expected, events);
  const response = new streamsPb.BatchAppendResp()
    .setCorrelationId(correlationId)
    .setStreamIdentifier(options.getStreamIdentifier());
  switch (expected.kind) {
    case 'any':
      response.setAny(new emptyPb.Empty());
      break;
    case 'no_stream':
      response.setNoStream(new emptyPb.Empty());
      break;
    case 'stream_exists':
      response.setStreamExists(new emptyPb.Empty());
      break;
    case 'revision':
      response.setStreamPosition(expected.revision.toString());
      break;
  }
  if (outcome.ok) {
    const success = new streamsPb.BatchAppendResp.Success();
    if (outcome.currentRevision === undefined) success.setNoStream(new emptyPb.Empty());
    else success.setCurrentRevision(outcome.currentRevision.toString());
    if (outcome.position === undefined) success.setNoPosition(new emptyPb.Empty());
    else
      success.setPosition(
        new sharedPb.AllStreamPosition()
          .setCommitPosition(outcome.position.toString())
          .setPreparePosition(outcome.position.toString()),
      );
    return response.setSuccess(success);
  }
  const details = new sharedPb.WrongExpectedVersion();
  if (outcome.currentRevision === undefined) details.setCurrentNoStream(new emptyPb.Empty());
  else details.setCurrentStreamRevision(outcome.currentRevision.toString());
  switch (expected.kind) {
    case 'any':
      details.setExpectedAny(new emptyPb.Empty());
      break;
    case 'no_stream':
      details.setExpectedNoStream(new emptyPb.Empty());
      break;
    case 'stream_exists':
      details.setExpectedStreamExists(new emptyPb.Empty());
      break;
    case 'revision':
      details.setExpectedStreamPosition(expected.revision.toString());
      break;
  }
  const packed = new anyPb.Any();
  packed.pack(details.serializeBinary(), WRONG_EXPECTED_VERSION_TYPE);
  const error = new statusPb.Status()
    .setCode(FAILED_PRECONDITION)
    .setMessage('WrongExpectedVersion')
    .setDetails(packed);
  return response.setError(error);
}

function appendWrongExpectedVersion(
  expected: ExpectedRevision,
  current: bigint | undefined,
): streamsPb.AppendResp.WrongExpectedVersion {
  const wrong = new streamsPb.AppendResp.WrongExpectedVersion();
  if (current === undefined) {
    wrong.setCurrentNoStream(new sharedPb.Empty());
    wrong.setNoStream2060(new sharedPb.Empty());
  } else {
    wrong.setCurrentRevision(current.toString());
    wrong.setCurrentRevision2060(Number(current));
  }
  switch (expected.kind) {
    case 'any':
      wrong.setExpectedAny(new sharedPb.Empty());
      wrong.setAny2060(new sharedPb.Empty());
      break;
    case 'no_stream':
      wrong.setExpectedNoStream(new sharedPb.Empty());
      break;
    case 'stream_exists':
      wrong.setExpectedStreamExists(new sharedPb.Empty());
      wrong.setStreamExists2060(new sharedPb.Empty());
      break;
    case 'revision':
      wrong.setExpectedRevision(expected.revision.toString());
      wrong.setExpectedRevision2060(Number(expected.revision));
      break;
  }
  return wrong;
}

function expectedOfAppend(options: streamsPb.AppendReq.Options): ExpectedRevision {
  if (options.hasRevision()) return { kind: 'revision', revision: BigInt(options.getRevision()) };
  if (options.hasNoStream()) return { kind: 'no_stream' };
  if (options.hasStreamExists()) return { kind: 'stream_exists' };
  return { kind: 'any' };
}

function expectedOfBatch(options: streamsPb.BatchAppendReq.Options): ExpectedRevision {
  if (options.hasStreamPosition()) return { kind: 'revision', revision: BigInt(options.getStreamPosition()) };
  if (options.hasNoStream()) return { kind: 'no_stream' };
  if (options.hasStreamExists()) return { kind: 'stream_exists' };
  return { kind: 'any' };
}

/** A proposed message as an event, or the name of the required metadata property it lacks. */
function toProposedEvent(
  message: streamsPb.AppendReq.ProposedMessage | streamsPb.BatchAppendReq.ProposedMessage,
): ProposedEvent | string {
  const metadata = message.getMetadataMap();
  const type = metadata.get('type');
  const contentType = metadata.get('content-type');
  if (type === undefined || type === '') return 'type';
  if (contentType === undefined || contentType === '') return 'content-type';
  return {
    id: uuidToString(message.getId()),
    type,
    contentType,
    data: message.getData_asU8(),
    customMetadata: message.getCustomMetadata_asU8(),
  };
}

function toReadResp(event: StoredEvent, structuredIds: boolean): ReadResp {
  const recorded = new streamsPb.ReadResp.ReadEvent.RecordedEvent()
    .setId(toUuid(event.id, structuredIds))
    .setStreamIdentifier(new sharedPb.StreamIdentifier().setStreamName(Buffer.from(event.streamName, 'utf8')))
    .setStreamRevision(event.revision.toString())
    .setCommitPosition(event.position.toString())
    .setPreparePosition(event.position.toString())
    .setData(event.data)
    .setCustomMetadata(event.customMetadata);
  recorded
    .getMetadataMap()
    .set('type', event.type)
    .set('content-type', event.contentType)
    .set('created', event.createdTicks.toString());
  const readEvent = new streamsPb.ReadResp.ReadEvent().setEvent(recorded).setCommitPosition(event.position.toString());
  return new streamsPb.ReadResp().setEvent(readEvent);
}

function uuidToString(uuid: sharedPb.UUID | undefined): string {
  if (uuid === undefined) return randomUUID();
  if (!uuid.hasStructured()) return uuid.getString();
  const structured = uuid.getStructured()!;
  const hex = (value: string): string => (BigInt(value) & 0xffff_ffff_ffff_ffffn).toString(16).padStart(16, '0');
  const most = hex(structured.getMostSignificantBits());
  const least = hex(structured.getLeastSignificantBits());
  return `${most.slice(0, 8)}-${most.slice(8, 12)}-${most.slice(12)}-${least.slice(0, 4)}-${least.slice(4)}`;
}

function toUuid(id: string, structured: boolean): sharedPb.UUID {
  if (!structured) return new sharedPb.UUID().setString(id);
  const hex = id.replaceAll('-', '');
  const signed = (part: string): string => BigInt.asIntN(64, BigInt(`0x${part}`)).toString();
  return new sharedPb.UUID().setStructured(
    new sharedPb.UUID.Structured()
      .setMostSignificantBits(signed(hex.slice(0, 16)))
      .setLeastSignificantBits(signed(hex.slice(16))),
  );
}

function unimplemented(what: string): ServerErrorResponse {
  const details = `esdb-wire-emulator (test double): ${what}`;
  return Object.assign(new Error(details), { code: status.UNIMPLEMENTED, details });
}

function missingMetadata(property: string): Partial<ServiceError> {
  const metadata = new Metadata();
  metadata.set('exception', 'missing-required-metadata-property');
  metadata.set('required-properties', property);
  return { code: status.INVALID_ARGUMENT, details: `Required metadata property '${property}' is missing`, metadata };
}

function failStream(call: ServerWritableStream<ReadReq, ReadResp>, error: ServerErrorResponse): void {
  call.emit('error', error);
}
