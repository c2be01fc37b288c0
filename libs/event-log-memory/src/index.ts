/**
 * `@lease-fence/event-log-memory`: the in-memory EventLog adapter (reference semantics, tests).
 */
export {
  createMemoryEventLog,
  createMemoryEventLogStorage,
  type InjectedAppendFailure,
  type MemoryEventLog,
  type MemoryEventLogOptions,
  type MemoryEventLogStorage,
} from './memory-event-log.js';
