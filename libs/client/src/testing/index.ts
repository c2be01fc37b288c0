/**
 * `@lease-fence/client/testing`: TEST DOUBLES for SDK users' tests — a coordinator HTTP double
 * with fault injection (built on the library's in-memory `LeaseCoordinator`), and manual timers.
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
