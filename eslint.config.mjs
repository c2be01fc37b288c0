// Lint for every project. Dependency direction (docs/design.md § Layout) is enforced separately by
// dependency-cruiser (.dependency-cruiser.cjs), run by `npm test`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
// Last in the list: switches off the stylistic rules that would fight Prettier's output (`npm run format`).
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/.nx/**', '**/coverage/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        Buffer: 'readonly',
        performance: 'readonly',
        queueMicrotask: 'readonly',
        structuredClone: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        window: 'readonly',
        document: 'readonly',
        requestAnimationFrame: 'readonly',
        cancelAnimationFrame: 'readonly',
        WebSocket: 'readonly',
        localStorage: 'readonly',
        navigator: 'readonly',
        location: 'readonly',
        history: 'readonly',
        Blob: 'readonly',
        HTMLCanvasElement: 'readonly',
        HTMLElement: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      'no-console': 'off',
    },
  },
  {
    // The library and the decider are pure: no ambient clock, no randomness, no I/O (docs/design.md § Layout).
    files: ['libs/lease-fence/src/**/*.ts', 'libs/coordinator-core/src/decider/**/*.ts'],
    ignores: ['**/*.spec.ts', 'libs/lease-fence/src/time/monotonic-clock.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'net', 'http', 'crypto', 'child_process'],
              message: 'Pure code: no I/O modules (docs/design.md § Layout).',
            },
          ],
        },
      ],
      'no-restricted-properties': [
        'error',
        {
          object: 'Date',
          property: 'now',
          message: 'Pure code: take time as a parameter (docs/design.md § The event-sourced coordinator).',
        },
        { object: 'Math', property: 'random', message: 'Pure code: take randomness as a parameter.' },
        { object: 'performance', property: 'now', message: 'Pure code: take time as a parameter.' },
      ],
    },
  },
  prettier,
);
