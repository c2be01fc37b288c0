// The workspace rules, plus the parser told that this project emits decorator metadata: Nest's
// constructor injection reads `design:paramtypes`, so a class used only as a constructor
// parameter type must stay a value import (typescript-eslint's consistent-type-imports then
// leaves decorated files alone instead of asking for `import type`, which would break DI).
import root from '../../eslint.config.mjs';

export default [
  ...root,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { emitDecoratorMetadata: true, experimentalDecorators: true } },
  },
];
