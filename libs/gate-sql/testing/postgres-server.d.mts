/** Starts a throwaway PostgreSQL server (see postgres-server.mjs). */
export declare const startPostgresServer: (options?: {
  fsync?: boolean;
}) => Promise<{ url: string; stop: () => Promise<void> }>;
/** The newest `/usr/lib/postgresql/<version>/bin` that has `initdb`, or undefined. */
export declare const findPostgresBin: () => Promise<string | undefined>;
