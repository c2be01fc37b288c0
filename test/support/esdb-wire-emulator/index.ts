/**
 * TEST DOUBLE — a small gRPC server that speaks enough of the EventStoreDB / KurrentDB client
 * protocol for the lease-fence EventStoreDB adapter to be tested with the real
 * `@kurrent/kurrentdb-client` where no server can be installed. It is NOT KurrentDB: one
 * process, memory only, no cluster, no auth, no TLS, no `$all`. Its semantics follow the
 * server's documented behaviour for what it does emulate (see stream-store.ts and
 * streams-service.ts); the adapter's contract suite also runs against a real server whenever
 * `EVENTSTORE_CONNECTION_STRING` is set.
 *
 * Both halves of the client reach it on one port: appends and subscriptions over grpc-js, reads
 * through the native Rust bridge (`@kurrent/bridge`), which calls `ServerFeatures` and then
 * `Streams/Read` over plain HTTP/2 with `?tls=false`.
 */
import { Server, ServerCredentials } from '@grpc/grpc-js';
import serverFeaturesGrpc from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/serverfeatures_grpc_pb.js';
import streamsGrpc from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/streams_grpc_pb.js';
import { openConnectionGate, type ConnectionGate } from './connection-gate.js';
import { createServerFeaturesService } from './server-features-service.js';
import { StreamStore } from './stream-store.js';
import { createStreamsService } from './streams-service.js';

export { StreamStore } from './stream-store.js';
export type { ExpectedRevision, ProposedEvent, StoredEvent, AppendOutcome, ReadOptions } from './stream-store.js';

/** Options of {@link startEsdbWireEmulator}. */
export interface EsdbWireEmulatorOptions {
  /** Version reported by `ServerFeatures`. @defaultValue '24.10.0' */
  readonly serverVersion?: string;
  /** Advertise `Streams/BatchAppend`, the path the Node client takes against a current server. @defaultValue true */
  readonly batchAppend?: boolean;
}

/** A running emulator. */
export interface EsdbWireEmulator {
  /** `kurrentdb://127.0.0.1:<port>?tls=false` — what `EVENTSTORE_CONNECTION_STRING` would hold. */
  readonly connectionString: string;
  /** The emulator's streams, for assertions that look past the client. */
  readonly store: StreamStore;
  /** gRPC method names called so far, in order (e.g. to check which append path the client took). */
  readonly calls: readonly string[];
  /** Connection loss: drops every client connection and refuses new ones; the streams survive. */
  suspend(): void;
  /**
   * A server that stopped answering: connections stay up but carry no bytes, new ones are
   * accepted and held. Calls wait until the client's own deadline or the adapter's timeout.
   */
  stall(): void;
  /** Ends a {@link EsdbWireEmulator.suspend} or {@link EsdbWireEmulator.stall}: clients can connect again, stalled connections carry on. */
  resume(): void;
  /**
   * An append with an unknown outcome: the next append that lands is followed, before its reply
   * is sent, by a {@link EsdbWireEmulator.suspend}, so the client sees the connection fail while
   * the events are stored. Call {@link EsdbWireEmulator.resume} afterwards.
   */
  loseNextAppendReply(): void;
  /** Stops the gRPC server and the relay. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts the emulator on 127.0.0.1, port 0, insecure.
 * @throws the bind error if 127.0.0.1 cannot be bound.
 * @example
 * ```ts
 * const emulator = await startEsdbWireEmulator();
 * const client = KurrentDBClient.connectionString(emulator.connectionString);
 * ```
 */
export async function startEsdbWireEmulator(options: EsdbWireEmulatorOptions = {}): Promise<EsdbWireEmulator> {
  const store = new StreamStore();
  const calls: string[] = [];
  const record = (method: string): void => {
    calls.push(method);
  };
  // The gate opens after the server is bound; the append hook reaches it through this holder.
  const faults: { loseReply: boolean; gate?: ConnectionGate } = { loseReply: false };
  const afterAppend = (): void => {
    if (!faults.loseReply) return;
    faults.loseReply = false;
    faults.gate?.suspend();
  };
  const server = new Server();
  server.addService(
    serverFeaturesGrpc.ServerFeaturesService,
    createServerFeaturesService(
      {
        serverVersion: options.serverVersion ?? '24.10.0',
        batchAppend: options.batchAppend ?? true,
      },
      record,
    ),
  );
  server.addService(streamsGrpc.StreamsService, createStreamsService(store, { onCall: record, afterAppend }));
  const grpcPort = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, port) =>
      error ? reject(error) : resolve(port),
    );
  });
  const gate = await openConnectionGate(grpcPort);
  faults.gate = gate;
  let stopped: Promise<void> | undefined;
  return {
    connectionString: `kurrentdb://127.0.0.1:${gate.port}?tls=false`,
    store,
    calls,
    suspend: () => gate.suspend(),
    stall: () => gate.stall(),
    resume: () => gate.resume(),
    loseNextAppendReply: () => {
      faults.loseReply = true;
    },
    stop() {
      stopped ??= (async () => {
        await gate.close();
        server.forceShutdown();
      })();
      return stopped;
    },
  };
}

/** The same as {@link startEsdbWireEmulator}, under the short name used in the issue. */
export const start = startEsdbWireEmulator;
