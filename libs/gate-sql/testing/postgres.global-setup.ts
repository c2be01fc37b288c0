/**
 * Vitest globalSetup: a real PostgreSQL server for this package's tests. With
 * `LEASE_FENCE_PG_URL` set (e.g. `postgres://postgres@127.0.0.1:5432/postgres`) that server is
 * used; otherwise `postgres-server.mjs` starts a throwaway one from Debian's binaries and stops
 * it at the end. Missing binaries or a server that does not start FAIL the run with a message
 * saying what to install: these tests are never skipped.
 *
 * Tests get the server's URL with `inject('postgresUrl')`; each test makes a database of its own.
 */
import type { TestProject } from 'vitest/node';
import { startPostgresServer } from './postgres-server.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL superuser URL of the server the tests use. */
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.LEASE_FENCE_PG_URL;
  if (given !== undefined && given.length > 0) {
    project.provide('postgresUrl', given);
    return undefined;
  }
  try {
    const server = await startPostgresServer({ fsync: false });
    project.provide('postgresUrl', server.url);
    return server.stop;
  } catch (error) {
    throw new Error(`gate-sql tests (never skipped): ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
}
