/**
 * Per-test-file databases and signed tokens for this package's tests.
 */
import { FenceTokenVerifier } from '@lease-fence/client';
import { createTestSigningKey, type TestSigningKey } from '@lease-fence/client/testing';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/** A fresh database on the test server; `drop()` removes it (after every pool on it ended). */
export const createTestDatabase = async (): Promise<{ url: string; drop: () => Promise<void> }> => {
  const serverUrl = inject('postgresUrl');
  const name = `gate_sql_${randomUUID().replaceAll('-', '')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
};

/** A coordinator's signing key and a verifier of its grants, with helpers to sign tokens. */
export interface TestGrants {
  readonly key: TestSigningKey;
  readonly verifier: FenceTokenVerifier;
  /** A signed grant of `fence` on `resource` to `holderId` in namespace `default`. */
  grant(resource: string, holderId: string, fence: number): Promise<string>;
}

/** A fresh signing key and a verifier that trusts it (static JWKS). */
export const createTestGrants = async (): Promise<TestGrants> => {
  const key = await createTestSigningKey();
  const verifier = new FenceTokenVerifier({ namespace: 'default', keys: { jwks: key.jwks } });
  return {
    key,
    verifier,
    grant: (resource, holderId, fence) => key.sign({ resource, holderId, fence, namespace: 'default' }),
  };
};
