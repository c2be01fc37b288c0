import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: { environment: 'node', include: ['src/**/*.spec.ts'], testTimeout: 20_000, passWithNoTests: true },
});
