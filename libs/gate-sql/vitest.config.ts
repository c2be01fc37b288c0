import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    environment: 'node',
    include: ['src/**/*.spec.ts'],
    globalSetup: ['testing/postgres.global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
