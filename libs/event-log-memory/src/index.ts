/**
 * `@lease-fence/event-log-memory`: the in-memory EventLog adapter (reference semantics; tests,
 * demos and the service's `memory` log). The implementation is coordinator-core's
 * `ports/memory-event-log.ts`, re-exported here under the adapter's name: coordinator-core's own
 * specs need it and cannot depend on this package, so there is one copy, contract-tested beside
 * the port.
 *
 * @see docs/design.md § "The event-sourced coordinator"
 */
export {
  createMemoryEventLog,
  createMemoryEventLogStorage,
  type InjectedAppendFailure,
  type MemoryEventLog,
  type MemoryEventLogOptions,
  type MemoryEventLogStorage,
} from '@lease-fence/coordinator-core';
