#!/usr/bin/env node
/**
 * `npm start`: build what is needed, start the coordinator on the embedded SQLite log in
 * ./data, create ./data/tokens.json on first run, start the demo (contending agents deploying
 * through a `lease-fence-gate` sidecar per deploy slot, in front of a deploy recorder; the demo
 * starts and supervises the sidecars, their data under ./data/demo/gates), and print the dashboard URL. Ctrl-C (or SIGTERM) stops everything in
 * order: the demo first (its agents release their leases), then the coordinator.
 *
 * `npm run coordinator` (`--coordinator-only`): the same without the demo.
 *
 * Options: `--coordinator-only`, `--skip-build`. Stops on SIGINT, SIGTERM, SIGHUP, and when its parent
 * (e.g. npm) goes away. The children run in process groups of their own (so Ctrl-C reaches only
 * this script, which stops them in order) and each holds an IPC channel to it: if this script dies
 * without stopping them (`kill -9` of its process group, a supervisor or CI runner killing it),
 * the channel closes and they stop by themselves instead of running on as orphans holding the port
 * and the data directory.
 * Environment: PORT (3000; 0 = any free port), HOST (127.0.0.1), LEASE_FENCE_DATA_DIR (./data),
 * LEASE_FENCE_TOKENS_FILE (<data>/tokens.json), DEMO_AGENTS (4) and the demo's DEMO_* settings.
 * With the demo, the coordinator's LEASE_FENCE_FENCE_FIRST defaults to the demo's slots
 * (DEMO_RESOURCES, or deploy-slot-*): each grant of a slot becomes active only once the deploy
 * slot's gate has admitted its fence over its gate link (set LEASE_FENCE_FENCE_FIRST= to turn it off).
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));
const unknown = [...args].filter((arg) => !['--coordinator-only', '--skip-build'].includes(arg));
if (unknown.length > 0) fail(`unknown option ${unknown.join(' ')} (known: --coordinator-only, --skip-build)`);
const coordinatorOnly = args.has('--coordinator-only');
const env = (name) => (process.env[name] === undefined || process.env[name] === '' ? undefined : process.env[name]);
const dataDir = resolve(env('LEASE_FENCE_DATA_DIR') ?? join(root, 'data'));
const tokensFile = resolve(env('LEASE_FENCE_TOKENS_FILE') ?? join(dataDir, 'tokens.json'));
const agentCount = Number(env('DEMO_AGENTS') ?? '4');
if (!Number.isSafeInteger(agentCount) || agentCount < 1)
  fail(`DEMO_AGENTS must be a positive integer, got ${JSON.stringify(env('DEMO_AGENTS'))}`);
const coordinatorMain = join(root, 'apps/coordinator/dist/main.js');
const demoMain = join(root, 'apps/demo/dist/main.js');

// 1. Build.
if (!args.has('--skip-build')) {
  const required = ['@lease-fence/coordinator', ...(coordinatorOnly ? [] : ['@lease-fence/gate', '@lease-fence/demo'])];
  say(`building ${required.join(', ')} …`);
  if (!build(required)) fail('the build failed (see above)');
  say('building @lease-fence/dashboard …');
  if (!build(['@lease-fence/dashboard']))
    say('warning: the dashboard did not build; the coordinator runs without it (the API and /docs still work)');
}
if (!existsSync(coordinatorMain)) {
  fail(
    `${relative(coordinatorMain)} is missing after the build: apps/coordinator has not been built (or does not exist yet). Build it with \`npx nx run @lease-fence/coordinator:build\`.`,
  );
}
if (!coordinatorOnly && !existsSync(demoMain)) fail(`${relative(demoMain)} is missing after the build`);

// 2. Tokens.
mkdirSync(dataDir, { recursive: true });
const tokens = readOrCreateTokens();
const viewer = tokens.find((entry) => entry.role === 'viewer');

// 3. Coordinator, in its own process group so Ctrl-C reaches only this script, which stops
// the children in order; the IPC channel ('ipc') is how it notices that this script has died.
/** @type {Map<string, import('node:child_process').ChildProcess>} */
const children = new Map();
const coordinator = spawn(process.execPath, [coordinatorMain], {
  cwd: root,
  detached: true,
  stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  env: {
    ...process.env,
    PORT: env('PORT') ?? '3000',
    HOST: env('HOST') ?? '127.0.0.1',
    LEASE_FENCE_DATA_DIR: dataDir,
    LEASE_FENCE_TOKENS_FILE: tokensFile,
    // The demo's slots are fenced first (handover: pending → admitted → active on the dashboard).
    // Empty (set but blank) keeps it off.
    ...(coordinatorOnly || process.env.LEASE_FENCE_FENCE_FIRST !== undefined
      ? {}
      : { LEASE_FENCE_FENCE_FIRST: env('DEMO_RESOURCES') ?? 'deploy-slot-*' }),
  },
});
children.set('coordinator', coordinator);
let stopping = false;
const listening = new Promise((resolveUrl, rejectUrl) => {
  createInterface({ input: coordinator.stdout }).on('line', (line) => {
    const record = parseJson(line);
    if (record?.msg === 'listening' && typeof record.url === 'string') resolveUrl(record.url);
    process.stdout.write(`${formatCoordinatorLine(line, record)}\n`);
  });
  createInterface({ input: coordinator.stderr }).on('line', (line) => process.stderr.write(`coordinator: ${line}\n`));
  coordinator.once('exit', (code, signal) =>
    rejectUrl(new Error(`the coordinator exited before listening (code ${code}, signal ${signal})`)),
  );
});
coordinator.on('exit', (code, signal) => {
  children.delete('coordinator');
  if (!stopping) {
    say(`the coordinator exited unexpectedly (code ${code}, signal ${signal}); stopping`);
    void shutdown(1);
  }
});
process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));
process.on('SIGHUP', () => void shutdown(0));
// `npm start` killed with SIGTERM exits without passing the signal on: stop when orphaned.
const parentPid = process.ppid;
setInterval(() => {
  if (process.ppid !== parentPid) void shutdown(0);
}, 1000).unref();
process.on('exit', () => {
  for (const child of children.values()) child.kill('SIGTERM');
});

let url;
try {
  url = await Promise.race([
    listening,
    delay(60_000).then(() => Promise.reject(new Error('the coordinator did not log "listening" within 60 s'))),
  ]);
} catch (error) {
  say(error.message);
  await shutdown(1);
}

// 4. Demo.
if (!coordinatorOnly) {
  const demo = spawn(process.execPath, [demoMain], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: {
      ...process.env,
      LEASE_FENCE_URL: url,
      LEASE_FENCE_TOKENS_FILE: tokensFile,
      LEASE_FENCE_DEMO_DIR: join(dataDir, 'demo'),
      DEMO_AGENTS: String(agentCount),
    },
  });
  children.set('demo', demo);
  demo.on('exit', (code, signal) => {
    children.delete('demo');
    if (!stopping)
      say(`the demo exited (code ${code}, signal ${signal}); the coordinator keeps running — Ctrl-C to stop`);
  });
}

// 5. Where to look.
const bar = '─'.repeat(78);
const lines = [
  bar,
  viewer === undefined
    ? `dashboard: ${url}/  (no viewer token in ${relative(tokensFile)})`
    : `dashboard: ${url}/?token=${encodeURIComponent(viewer.token)}`,
  ...(viewer === undefined
    ? []
    : [
        `leases:    curl -s -H 'Authorization: Bearer ${viewer.token}' ${url}/v1/leases`,
        `events:    curl -s -H 'Authorization: Bearer ${viewer.token}' '${url}/v1/events?after=0&limit=20'`,
      ]),
  `tokens:    ${relative(tokensFile)}    log: ${relative(dataDir)}    Ctrl-C stops everything`,
  bar,
];
process.stdout.write(`${lines.join('\n')}\n`);

// ── helpers ────────────────────────────────────────────────────────────────────────────────

/** Stops the demo, then the coordinator (SIGTERM, then SIGKILL after a grace period), then exits. */
async function shutdown(code) {
  if (stopping) return;
  stopping = true;
  say('stopping: demo first (agents release their leases), then the coordinator');
  for (const [name, graceMillis] of [
    ['demo', 20_000],
    ['coordinator', 15_000],
  ]) {
    const child = children.get(name);
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
    child.kill('SIGTERM');
    if ((await Promise.race([exited.then(() => 'exited'), delay(graceMillis).then(() => 'timeout')])) === 'timeout') {
      say(`${name} did not stop within ${graceMillis / 1000} s; killing it`);
      child.kill('SIGKILL');
      await exited;
    }
    children.delete(name);
  }
  say('stopped');
  process.exit(code);
}

/** Runs one Nx build; true when it succeeded. */
function build(projects) {
  const result = spawnSync(
    'npx',
    ['nx', 'run-many', '-t', 'build', `--projects=${projects.join(',')}`, '--outputStyle=stream'],
    {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false' },
    },
  );
  return result.status === 0;
}

/** Reads the tokens file, or creates it with random tokens: one viewer, one per agent, one gate. */
function readOrCreateTokens() {
  if (existsSync(tokensFile)) {
    const entries = parseJson(readFileSync(tokensFile, 'utf8'));
    if (!Array.isArray(entries)) fail(`${relative(tokensFile)} is not a JSON array of tokens`);
    say(`using the tokens in ${relative(tokensFile)}`);
    return entries;
  }
  const token = () => randomBytes(24).toString('base64url');
  const entries = [
    { token: token(), role: 'viewer' },
    ...Array.from({ length: agentCount }, (_, index) => ({
      token: token(),
      role: 'agent',
      holderId: `agent-${index + 1}`,
    })),
    { token: token(), role: 'gate', gateId: 'deploy-gate', resources: ['deploy-*'] },
  ];
  mkdirSync(dirname(tokensFile), { recursive: true });
  writeFileSync(tokensFile, `${JSON.stringify(entries, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  say(`created ${relative(tokensFile)}: 1 viewer, ${agentCount} agent and 1 gate token (keep it private)`);
  return entries;
}

/** A coordinator log line, shortened for the terminal: time, level when not info, msg, other fields. */
function formatCoordinatorLine(line, record) {
  if (record === undefined || typeof record.msg !== 'string') return `coordinator: ${line}`;
  const { level, time, pid: _pid, hostname: _hostname, msg, ...fields } = record;
  const when = typeof time === 'number' ? new Date(time) : new Date();
  const clock = `${[when.getHours(), when.getMinutes(), when.getSeconds()].map((part) => String(part).padStart(2, '0')).join(':')}.${String(when.getMilliseconds()).padStart(3, '0')}`;
  const label =
    typeof level === 'number'
      ? ({ 40: 'WARN ', 50: 'ERROR ', 60: 'FATAL ' }[level] ?? '')
      : typeof level === 'string' && level !== 'info'
        ? `${level.toUpperCase()} `
        : '';
  const rest = Object.keys(fields).length === 0 ? '' : ` ${JSON.stringify(fields)}`;
  return `${clock}  ${'coordinator'.padEnd(14)} ${'-'.padEnd(14)} ${label}${msg}${rest}`;
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function relative(path) {
  return path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path;
}

function delay(millis) {
  return new Promise((resolveDelay) => setTimeout(resolveDelay, millis).unref());
}

function say(message) {
  process.stdout.write(`[start] ${message}\n`);
}

function fail(message) {
  process.stderr.write(`[start] ${message}\n`);
  process.exit(1);
}
