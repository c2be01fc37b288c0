// The workspace rules, plus React's rules of hooks and the React Compiler's checks
// (eslint-plugin-react-hooks, recommended set): hooks called unconditionally with complete
// dependencies, no ref read or written during render, no side effect in render.
import reactHooks from 'eslint-plugin-react-hooks';
import root from '../../eslint.config.mjs';

export default [
  ...root,
  {
    files: ['src/**/*.ts', 'src/**/*.tsx'],
    ...reactHooks.configs.flat['recommended-latest'],
  },
];
