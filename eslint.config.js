// Lint: typescript-eslint's recommended rules plus the house limits (files never over 500 lines), and
// for the web console a ban on every way of writing HTML from strings: agent data is hostile.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // .test-build: the tests' transpiled copy of src (test/helpers/compiled-tree.ts). openapi.gen.ts: the
  // console's API types, generated from the OpenAPI document (scripts/openapi-types.ts), long by nature.
  { ignores: ['dist/', 'node_modules/', 'data/', 'coverage/', '.test-build/', 'web/src/api/openapi.gen.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      'max-lines': ['error', { max: 500, skipBlankLines: false, skipComments: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    // Plain Node scripts that run before anything is compiled (scripts/build.mjs, the smoke test).
    files: ['**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', fetch: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URL: 'readonly', Buffer: 'readonly', AbortSignal: 'readonly' } },
  },
  {
    files: ['web/src/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "JSXAttribute[name.name='dangerouslySetInnerHTML']", message: 'Render agent data as text; never as HTML.' },
        { selector: 'AssignmentExpression[left.property.name=/^(innerHTML|outerHTML)$/]', message: 'Render agent data as text; never as HTML.' },
        { selector: "CallExpression[callee.property.name='insertAdjacentHTML']", message: 'Render agent data as text; never as HTML.' },
        // document.write only: a terminal's write() paints bytes into its own screen, never HTML.
        { selector: "CallExpression[callee.object.name='document'][callee.property.name=/^(write|writeln)$/]", message: 'Render agent data as text; never as HTML.' },
        { selector: "CallExpression[callee.name='eval'], NewExpression[callee.name='Function']", message: 'The CSP forbids eval.' },
      ],
    },
  },
);
