/**
 * `@lease-fence/event-log-eventstoredb`: the EventLog adapter over KurrentDB / EventStoreDB,
 * built on `@kurrent/kurrentdb-client` (the maintained successor of `@eventstore/db-client`).
 */
export {
  createEventStoreDbEventLog,
  type EventStoreDbEventLog,
  type EventStoreDbEventLogOptions,
} from './eventstoredb-event-log.js';
export {
  connectEventStoreDbEventLog,
  type ConnectEventStoreDbEventLogOptions,
} from './connect-eventstoredb-event-log.js';
export { openFirstContactEventLog } from './first-contact-event-log.js';
/** The stream names of one coordinator namespace (events and snapshots); documented at its source. */
export type { NamespaceStreams } from './to-eventstoredb.js';
