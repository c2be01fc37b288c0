// Starts a throwaway PostgreSQL server from Debian's binaries (/usr/lib/postgresql/<version>/bin):
// initdb into a temporary directory, pg_ctl start on a free loopback port, and a stop() that runs
// pg_ctl stop and deletes the directory. As root, both run as the `postgres` user (initdb refuses
// root). Used by the tests' globalSetup (postgres.global-setup.ts) and by bench/sql-gate.bench.mjs.
// Plain JavaScript so the benchmark can run it without a compile step.
import { execFile } from 'node:child_process';
import { chown, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The newest /usr/lib/postgresql/<version>/bin that has initdb, or undefined. */
export const findPostgresBin = async () => {
  const root = '/usr/lib/postgresql';
  const versions = await readdir(root).catch(() => []);
  for (const version of versions.sort((a, b) => Number(b) - Number(a))) {
    const bin = join(root, version, 'bin');
    if ((await readdir(bin).catch(() => [])).includes('initdb')) return bin;
  }
  return undefined;
};

/** A loopback port nobody listens on right now. */
const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

const postgresIds = async () => {
  const { stdout: uid } = await run('id', ['-u', 'postgres']);
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  return [Number(uid.trim()), Number(gid.trim())];
};

/**
 * Starts a server. `fsync: false` (the tests) trades crash durability of the throwaway server for
 * speed; the benchmark keeps the default (on), as a real database would.
 * Throws an Error saying what to install when the binaries are missing or the server does not start.
 * @param {{ fsync?: boolean }} [options]
 * @returns {Promise<{ url: string, stop: () => Promise<void> }>} a superuser URL and the stop function
 */
export const startPostgresServer = async (options = {}) => {
  const bin = await findPostgresBin();
  if (bin === undefined) {
    throw new Error(
      "a real PostgreSQL server is needed: install Debian's postgresql package (apt-get install -y postgresql; .ci/run does it) " +
        "or set LEASE_FENCE_PG_URL to a server's superuser URL.",
    );
  }
  const asRoot = process.getuid?.() === 0;
  const exec = (command, args) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, command), ...args]) : run(join(bin, command), args);
  const directory = await mkdtemp(join(tmpdir(), 'lease-fence-pg-'));
  if (asRoot) await chown(directory, ...(await postgresIds()));
  const dataDir = join(directory, 'data');
  const logFile = join(directory, 'server.log');
  let started = false;
  const stop = async () => {
    if (started) await exec('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    await rm(directory, { recursive: true, force: true });
  };
  try {
    await exec('initdb', ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    let lastError;
    for (let attempt = 0; attempt < 3 && !started; attempt += 1) {
      const port = await freePort();
      const settings = `-p ${port} -k ${directory} -h 127.0.0.1${options.fsync === false ? ' -c fsync=off' : ''}`;
      try {
        await exec('pg_ctl', ['-D', dataDir, '-o', settings, '-l', logFile, '-w', '-t', '60', 'start']);
        started = true;
        return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop };
      } catch (error) {
        lastError = error; // the port was taken between the probe and the start: try another
      }
    }
    throw lastError;
  } catch (error) {
    const log = await readFile(logFile, 'utf8').catch(() => '(no server log)');
    await stop();
    throw new Error(
      `could not start PostgreSQL from ${bin}: ${error instanceof Error ? error.message : String(error)}\n${log}`,
      { cause: error },
    );
  }
};
