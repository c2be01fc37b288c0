/** Test kits for the dashboard model: an event-log builder, a fast-check arbitrary log, seeded fast-check parameters, an instant's local calendar fields, a nearest-rank reference. */
export * from './log-builder.js';
export * from './arbitrary-log.js';
export * from './fc-seed.js';
export * from './local-fields.js';
export * from './nearest-rank.js';
