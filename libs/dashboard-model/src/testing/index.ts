/** Test kits for the dashboard model: an event-log builder, a fast-check arbitrary log, seeded fast-check parameters. */
export * from './log-builder.js';
export * from './arbitrary-log.js';
export * from './fc-seed.js';
