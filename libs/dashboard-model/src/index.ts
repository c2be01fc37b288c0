/**
 * The dashboard's pure model: everything it shows, computed from recorded events without React,
 * the DOM or I/O, so the dashboard, its tests and the cross-project tests share one copy.
 */
export * from './clock-stamp.js';
export * from './clone-view-state.js';
export * from './coordinator-start.js';
export * from './current-holders.js';
export * from './debug-hook.js';
export * from './event-index.js';
export * from './evolve-view.js';
export * from './explain-rejection.js';
export * from './exposure.js';
export * from './fold-events.js';
export * from './format.js';
export * from './gate-rows.js';
export * from './holder-color.js';
export * from './investigation-export.js';
export * from './investigation.js';
export * from './jump-target.js';
export * from './lane-filter.js';
export * from './lease-match.js';
export * from './mutable-view-state.js';
export * from './rates.js';
export * from './search-log.js';
export * from './synthetic.js';
export * from './view-history.js';
export * from './view-state.js';
export * from './who-held.js';
