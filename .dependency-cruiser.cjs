/**
 * Enforces docs/design.md § Layout: apps → libs; client, coordinator-core, event-log-* → lease-fence
 * and protocol; lease-fence → nothing; the dashboard imports protocol only.
 * Workspace packages resolve through node_modules symlinks to their folders, so rules match
 * on the resolved folder (`libs/<name>/`).
 */
const lib = (name) => `^libs/${name}/`;
module.exports = {
  forbidden: [
    { name: 'lease-fence-depends-on-nothing', severity: 'error',
      comment: 'libs/lease-fence is pure TypeScript with no runtime dependencies (docs/design.md § Layout).',
      from: { path: lib('lease-fence') }, to: { path: '^(libs/(?!lease-fence/)|apps/|node_modules/)', dependencyTypesNot: ['core'] } },
    { name: 'lease-fence-no-io', severity: 'error', comment: 'libs/lease-fence does no I/O.',
      from: { path: lib('lease-fence'), pathNot: '\\.spec\\.ts$' }, to: { dependencyTypes: ['core'] } },
    { name: 'protocol-depends-on-zod-only', severity: 'error',
      from: { path: lib('protocol') }, to: { path: '^(libs/(?!protocol/)|apps/)' } },
    { name: 'core-no-drivers', severity: 'error',
      comment: 'coordinator-core has no NestJS and no database driver (docs/design.md § Layout).',
      from: { path: lib('coordinator-core') },
      to: { path: ['^apps/', 'libs/(event-log-|client/)', 'node_modules/(@nestjs|better-sqlite3|@kurrent|@eventstore|pino)'] } },
    { name: 'adapters-only-core-and-protocol', severity: 'error',
      from: { path: '^libs/event-log-' }, to: { path: ['^apps/', 'libs/(client)/', 'node_modules/@nestjs'] } },
    { name: 'adapters-independent', severity: 'error',
      from: { path: '^libs/event-log-([^/]+)/' }, to: { path: '^libs/event-log-(?!$1/)' } },
    { name: 'client-sdk', severity: 'error',
      from: { path: lib('client') }, to: { path: ['^apps/', 'libs/(coordinator-core|event-log-)', 'node_modules/@nestjs'] } },
    { name: 'dashboard-protocol-only', severity: 'error',
      comment: 'The dashboard talks HTTP + WebSocket and imports libs/protocol only (docs/design.md § Layout).',
      from: { path: '^apps/dashboard/' }, to: { path: ['^libs/(?!protocol/)', '^apps/(?!dashboard/)'] } },
    { name: 'libs-never-import-apps', severity: 'error', from: { path: '^libs/' }, to: { path: '^apps/' } },
    { name: 'apps-independent', severity: 'error',
      from: { path: '^apps/([^/]+)/' }, to: { path: '^apps/(?!$1/)' } },
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules|\\.nx)/' },
    tsPreCompilationDeps: true,
    preserveSymlinks: false,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'types', 'default', 'node'], extensions: ['.ts', '.tsx', '.js', '.mjs'] },
  },
};
