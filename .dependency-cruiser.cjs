/**
 * The layering of the workspace (docs/design.md § Layout), checked by `npm run depcruise` (part of
 * `npm test`):
 *
 *   apps/*                      → libs (never another app)
 *   libs/client                 → lease-fence, protocol (no coordinator, no NestJS)
 *   libs/gate-sql               → lease-fence, protocol, client (resource side: no coordinator, no NestJS)
 *   libs/coordinator-core       → lease-fence, protocol (no NestJS, no database driver, no pino)
 *   libs/event-log-*            → coordinator-core, protocol, their own driver (never each other)
 *   libs/dashboard-model        → protocol only (pure: no React, no DOM, no I/O)
 *   libs/protocol               → zod and lease-fence (the lease rules' denial reasons, no I/O)
 *   libs/lease-fence            → nothing (pure TypeScript, no I/O)
 *   apps/dashboard              → protocol and dashboard-model only (it talks HTTP + WebSocket), and
 *                                 the client's retry policy (one copy of the jittered backoff; no imports)
 *
 * Rules are written by layer (folder patterns), never by file list, so new files fall under them.
 *
 * How imports are seen: workspace packages (`lease-fence`, `@lease-fence/*`) resolve to their
 * sources through the `paths` of tsconfig.depcruise.json, so a rule sees `libs/<name>/src/…`
 * whether or not the package was built. npm packages resolve into `node_modules/` and are not
 * followed (`doNotFollow`) but are still edges the rules see. Only the workspace's own build
 * output (`dist/`) and Nx's cache are excluded. An import that cannot be resolved at all is an
 * error (`not-to-unresolvable`), so a resolution mistake cannot silently hide edges again.
 *
 * test/depcruise/depcruise.spec.ts plants forbidden imports in a scratch copy and expects this
 * check to fail on each.
 */

/** Files that only tests and tooling load: specs, benches, vitest configs, declaration files. */
const TEST_FILES = '(\\.spec\\.tsx?|\\.bench\\.ts|(^|/)vitest\\.config\\.ts|\\.d\\.ts)$';
/** A library's folder. */
const lib = (name) => `^libs/${name}/`;

module.exports = {
  forbidden: [
    {
      name: 'lease-fence-depends-on-nothing',
      severity: 'error',
      comment:
        'libs/lease-fence is pure TypeScript with no runtime dependencies: no npm package, no other workspace package.',
      from: { path: lib('lease-fence'), pathNot: TEST_FILES },
      to: { path: ['^(libs/(?!lease-fence/)|apps/|test/)', '(^|/)node_modules/'] },
    },
    {
      name: 'lease-fence-no-io',
      severity: 'error',
      comment: 'libs/lease-fence does no I/O: no Node.js core module.',
      from: { path: lib('lease-fence'), pathNot: TEST_FILES },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'protocol-depends-on-zod-only',
      severity: 'error',
      comment:
        "libs/protocol is schemas: zod, and lease-fence for the rules' own lists (denial reasons); nothing else.",
      from: { path: lib('protocol'), pathNot: TEST_FILES },
      to: { path: ['^(libs/(?!protocol/|lease-fence/)|apps/|test/)', '(^|/)node_modules/(?!zod/)'] },
    },
    {
      name: 'config-env-depends-on-zod-only',
      severity: 'error',
      comment: 'libs/config-env is environment parsing: zod, and lease-fence for the id length; no I/O, nothing else.',
      from: { path: lib('config-env'), pathNot: TEST_FILES },
      to: { path: ['^(libs/(?!config-env/|lease-fence/)|apps/|test/)', '(^|/)node_modules/(?!zod/)'] },
    },
    {
      name: 'config-env-no-io',
      severity: 'error',
      comment: 'libs/config-env parses what it is given; the apps read process.env.',
      from: { path: lib('config-env'), pathNot: TEST_FILES },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'core-no-drivers',
      severity: 'error',
      comment: 'coordinator-core has no NestJS, no database driver and no logger; adapters and the app bring those.',
      from: { path: lib('coordinator-core') },
      to: {
        path: [
          '^apps/',
          '^libs/(event-log-|client/|dashboard-model/)',
          '(^|/)node_modules/(@nestjs|better-sqlite3|@kurrent|@eventstore|pino|prom-client|ws|express|fastify)/',
        ],
      },
    },
    {
      name: 'adapters-only-core-and-protocol',
      severity: 'error',
      comment: 'An event-log adapter implements the core port: no app, no SDK, no NestJS.',
      from: { path: '^libs/event-log-' },
      to: { path: ['^apps/', '^libs/(client|dashboard-model)/', '(^|/)node_modules/@nestjs/'] },
    },
    {
      name: 'adapters-independent',
      severity: 'error',
      comment: 'Event-log adapters never import one another.',
      from: { path: '^libs/event-log-([^/]+)/' },
      to: { path: '^libs/event-log-', pathNot: '^libs/event-log-$1/' },
    },
    {
      name: 'client-sdk',
      severity: 'error',
      comment: 'The agent SDK talks to the coordinator over HTTP: no coordinator internals, no NestJS.',
      from: { path: lib('client') },
      to: { path: ['^apps/', '^libs/(coordinator-core|event-log-|dashboard-model/)', '(^|/)node_modules/@nestjs/'] },
    },
    {
      name: 'gate-sql-resource-side',
      severity: 'error',
      comment:
        'The SQL gates are resource-side like the SDK: lease-fence, protocol and client; no coordinator internals, no NestJS.',
      from: { path: lib('gate-sql') },
      to: { path: ['^apps/', '^libs/(coordinator-core|event-log-|dashboard-model/)', '(^|/)node_modules/@nestjs/'] },
    },
    {
      name: 'dashboard-model-pure',
      severity: 'error',
      comment:
        'The dashboard model is a pure fold over protocol events: protocol only, no React, no Node.js core module (its test kit under src/testing/ may use fast-check).',
      from: { path: lib('dashboard-model'), pathNot: [TEST_FILES, '^libs/dashboard-model/src/testing/'] },
      to: { path: ['^libs/(?!(dashboard-model|protocol)/)', '^apps/', '^test/', '(^|/)node_modules/'] },
    },
    {
      name: 'dashboard-model-no-io',
      severity: 'error',
      from: { path: lib('dashboard-model'), pathNot: TEST_FILES },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'dashboard-protocol-and-model-only',
      severity: 'error',
      comment:
        "The dashboard talks HTTP + WebSocket: it imports libs/protocol and libs/dashboard-model only, and the client's retry policy (pure, importing nothing), so the SDK and the dashboard reconnect with one backoff.",
      from: { path: '^apps/dashboard/' },
      to: {
        path: ['^libs/(?!(protocol|dashboard-model)/|client/src/retry-policy\\.ts$)', '^apps/(?!dashboard/)', '^test/'],
      },
    },
    { name: 'libs-never-import-apps', severity: 'error', from: { path: '^libs/' }, to: { path: '^(apps|test)/' } },
    {
      name: 'apps-independent',
      severity: 'error',
      comment: 'An app never imports another app (tests import apps through their packages).',
      from: { path: '^apps/([^/]+)/' },
      to: { path: '^(apps/|test/)', pathNot: '^apps/$1/' },
    },
    {
      name: 'tests-import-packages',
      severity: 'error',
      comment:
        "Cross-project tests import libraries through their packages, never by relative path into a package's sources.",
      from: { path: '^test/' },
      to: {
        path: '^(libs|apps)/[^/]+/src/',
        dependencyTypes: ['local'],
        dependencyTypesNot: ['aliased-tsconfig-paths'],
      },
    },
    {
      name: 'shipped-code-declares-its-dependencies',
      severity: 'error',
      comment:
        'Non-test code of a package imports only npm packages its own package.json lists under dependencies or peerDependencies (an optional peer is also a devDependency, for its tests; test kits under src/testing/ may use the test runner).',
      from: { path: '^(libs|apps)/[^/]+/src/', pathNot: [TEST_FILES, '^(libs|apps)/[^/]+/src/testing/'] },
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown', 'npm-dev'], dependencyTypesNot: ['npm-peer'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve is an edge no rule can check (benchmarks of built output excepted).',
      from: {},
      to: { couldNotResolve: true, pathNot: '(^|/)dist/' },
    },
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Only the workspace's own build output and Nx's cache: an npm package's `dist/` is an edge.
    exclude: { path: '^((libs|apps)/[^/]+|test)/dist/|(^|/)\\.nx/' },
    tsPreCompilationDeps: true,
    preserveSymlinks: false,
    combinedDependencies: false,
    tsConfig: { fileName: 'tsconfig.depcruise.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'types', 'default', 'node'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.d.ts'],
    },
  },
};
