/**
 * `@lease-fence/client/testing`: TEST DOUBLES for SDK users' tests — a coordinator HTTP double
 * with fault injection (built on the library's in-memory `LeaseCoordinator`), manual timers, and a
 * grant signing key in the coordinator's token format.
 * Never use them in production.
 */
export {
  openCoordinatorTestDouble,
  type CoordinatorTestDouble,
  type CoordinatorTestDoubleOptions,
  type DoubleRoute,
  type HandledRequest,
  type InjectedFault,
  type TokenEntry,
} from './coordinator-test-double.js';
export { createManualTimers, type ManualTimers } from './manual-timers.js';
export { createTestSigningKey, type TestSigningKey } from './test-signing-key.js';
