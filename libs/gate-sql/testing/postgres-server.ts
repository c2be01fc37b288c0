/**
 * Vitest globalSetup: a real PostgreSQL server for this package's tests. With
 * `LEASE_FENCE_PG_URL` set (e.g. `postgres://postgres@127.0.0.1:5432/postgres`) that server is
 * used; otherwise Debian's `postgresql` binaries (`/usr/lib/postgresql/<version>/bin`) start a
 * throwaway server: `initdb` into a temporary directory, `pg_ctl start` on a free loopback port,
 * and at the end `pg_ctl stop` and the directory removed. As root, both run as the `postgres`
 * user (initdb refuses root). Missing binaries or a server that does not start FAIL the run
 * with a message saying what to install: these tests are never skipped.
 *
 * Tests get the server's URL with `inject('postgresUrl')`, and each test file makes a database
 * of its own on it.
 */
import { execFile } from 'node:child_process';
import { chown, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL superuser URL of the server the tests use. */
    postgresUrl: string;
  }
}

const run = promisify(execFile);

/** The newest `/usr/lib/postgresql/<version>/bin` that has `initdb`, or undefined. */
const findPostgresBin = async (): Promise<string | undefined> => {
  const root = '/usr/lib/postgresql';
  const versions = await readdir(root).catch(() => [] as string[]);
  for (const version of versions.sort((a, b) => Number(b) - Number(a))) {
    const bin = join(root, version, 'bin');
    if ((await readdir(bin).catch(() => [] as string[])).includes('initdb')) return bin;
  }
  return undefined;
};

/** A loopback port nobody listens on right now. */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.LEASE_FENCE_PG_URL;
  if (given !== undefined && given.length > 0) {
    project.provide('postgresUrl', given);
    return undefined;
  }
  const bin = await findPostgresBin();
  if (bin === undefined) {
    throw new Error(
      'gate-sql tests need a real PostgreSQL server: install Debian\'s postgresql package (apt-get install -y postgresql; .ci/run does it) '
        + 'or set LEASE_FENCE_PG_URL to a server\'s superuser URL. These tests are never skipped.',
    );
  }
  const asRoot = process.getuid?.() === 0;
  const exec = (command: string, args: readonly string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, command), ...args]) : run(join(bin, command), [...args]);
  const directory = await mkdtemp(join(tmpdir(), 'lease-fence-pg-'));
  if (asRoot) await chown(directory, ...(await postgresIds()));
  const dataDir = join(directory, 'data');
  const logFile = join(directory, 'server.log');
  let started = false;
  const stop = async (): Promise<void> => {
    if (started) await exec('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    await rm(directory, { recursive: true, force: true });
  };
  try {
    await exec('initdb', ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    let lastError: unknown;
    for (let attempt = 0; attempt < 3 && !started; attempt += 1) {
      const port = await freePort();
      try {
        await exec('pg_ctl', ['-D', dataDir, '-o', `-p ${port} -k ${directory} -h 127.0.0.1 -c fsync=off`, '-l', logFile, '-w', '-t', '60', 'start']);
        started = true;
        project.provide('postgresUrl', `postgres://postgres@127.0.0.1:${port}/postgres`);
      } catch (error) {
        lastError = error; // the port was taken between the probe and the start: try another
      }
    }
    if (!started) throw lastError;
  } catch (error) {
    const log = await readFile(logFile, 'utf8').catch(() => '(no server log)');
    await stop();
    throw new Error(`gate-sql tests: could not start PostgreSQL from ${bin}: ${error instanceof Error ? error.message : String(error)}\n${log}`, { cause: error });
  }
  return stop;
}

/** The uid and gid of the `postgres` user (who owns the data directory). */
const postgresIds = async (): Promise<[number, number]> => {
  const { stdout } = await run('id', ['-u', 'postgres']);
  const { stdout: group } = await run('id', ['-g', 'postgres']);
  return [Number(stdout.trim()), Number(group.trim())];
};
