import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [react()],
  base: '/',
  build: { outDir: 'dist' },
  server: { proxy: { '/v1': { target: 'http://127.0.0.1:3000', ws: true } } },
  test: { environment: 'node', include: ['src/**/*.spec.ts', 'src/**/*.spec.tsx'] },
});
