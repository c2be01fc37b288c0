/**
 * TEST DOUBLE — the `ServerFeatures` gRPC service of the wire emulator. Both halves of the
 * Kurrent client ask it first: the grpc-js half to choose `BatchAppend` over `Append`, the Rust
 * bridge before its first read. It advertises only the methods the emulator answers.
 */
import type { IServerFeaturesServer } from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/serverfeatures_grpc_pb.js';
import serverFeaturesPb from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/serverfeatures_pb.js';

/** What the emulator tells clients about itself. */
export interface AdvertisedFeatures {
  /** Version string the emulator reports (semver, as a server would). */
  readonly serverVersion: string;
  /** Whether `Streams/BatchAppend` is advertised (the Node client then appends through it). */
  readonly batchAppend: boolean;
}

const STREAMS_SERVICE = 'event_store.client.streams.Streams';

/** Builds the ServerFeatures service implementation. */
export function createServerFeaturesService(
  features: AdvertisedFeatures,
  onCall: (method: string) => void = () => {},
): IServerFeaturesServer {
  return {
    getSupportedMethods(_call, callback) {
      onCall('GetSupportedMethods');
      const methods = ['Read', 'Append', ...(features.batchAppend ? ['BatchAppend'] : [])].map((name) =>
        new serverFeaturesPb.SupportedMethod().setServiceName(STREAMS_SERVICE).setMethodName(name),
      );
      callback(
        null,
        new serverFeaturesPb.SupportedMethods()
          .setMethodsList(methods)
          .setEventStoreServerVersion(features.serverVersion),
      );
    },
  };
}
