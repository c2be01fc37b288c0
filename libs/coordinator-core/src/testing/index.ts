/**
 * `@lease-fence/coordinator-core/testing`: test support for adapters and for the coordinator's
 * own specs. Imports vitest; never import it from production code.
 */
export { describeEventLogContract, readAll, takeUntil, type EventLogFactory } from './event-log-contract.js';
export * from './event-builders.js';
export { acquire, at, foldEvents, given, release, renew, type DecisionExpectation } from './decider-specification.js';
export { describeStandbyScenarios, type SharedLog } from './standby-scenarios.js';
export {
  createTestEventLog,
  createTestEventLogStorage,
  type TestEventLog,
  type TestEventLogStorage,
} from './test-event-log.js';
