/** DI token of the opened `EventLog` (from `@lease-fence/coordinator-core`); see `event-log.module.ts`. */
export const EVENT_LOG = Symbol('lease-fence:event-log');
