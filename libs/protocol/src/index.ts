/**
 * `@lease-fence/protocol`: zod schemas and inferred types of the event log, the HTTP API and the
 * WebSocket stream. The one copy of each wire shape (docs/design.md § Layout).
 */
export * from './events.js';
export * from './denial-reason.js';
export * from './http.js';
export * from './resource-pattern.js';
export * from './stream.js';
export * from './gate-link.js';
export * from './gate-status.js';
export * from './signed-grant.js';
export * from './shape-check.js';
export * from './agent-link.js';
