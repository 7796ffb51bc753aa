import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import globals from 'globals'
import neostandard from 'neostandard'

export default tseslint.config(
  // clients/typescript/src/schema.d.ts is openapi-typescript's output (npm run client:generate)
  { ignores: ['dist/', 'node_modules/', 'data/', 'coverage/', 'clients/typescript/dist/', 'clients/typescript/src/schema.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // the house format, held by `npm run lint` (`npm run lint -- --fix` applies it): neostandard,
  // whose style is the one the code was written in
  ...neostandard({ noJsx: true, ts: true, filesTs: ['**/*.ts'] }),
  {
    // neostandard's rules that are not about format and that this code answers otherwise: `r`
    // for a resolve, `void` for a promise deliberately not awaited, a loop waiting on a flag a
    // callback sets, and a zod schema and its inferred type under one name (tsc catches a real
    // redeclaration)
    rules: {
      'promise/param-names': 'off',
      'no-void': 'off',
      'no-unmodified-loop-condition': 'off',
      '@typescript-eslint/no-redeclare': 'off'
    }
  },
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      'no-console': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error'
    }
  },
  {
    files: ['src/cli/**', 'scripts/**', 'bench/**', 'test/**', 'clients/typescript/examples/**'],
    rules: { 'no-console': 'off' }
  },
  {
    files: ['src/upstream/**', 'src/discovery/**', 'src/argus/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['fastify', '**/routes/**', '**/plugins/**', '**/control/**'], message: 'protocol core and reads know no Fastify and no control code' }] }]
    }
  },
  {
    files: ['src/control/**', 'src/ledger/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['fastify', 'fastify-*', '@fastify/*', '**/routes/**', '**/plugins/**', '**/simulator/**'], message: 'the control plane and the ledger are plain factories: no Fastify, no routes, no simulator' }] }]
    }
  },
  {
    // the A2A front door's core is the REST surface's twin on the same Fastify-free core
    // (docs/api.md#a2a-front-door): routes/a2a.ts wires it; test/front/wall.test.ts checks the transitive imports
    files: ['src/front/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['fastify', 'fastify-*', '@fastify/*', '**/routes/**', '**/plugins/**'], message: 'the front door\'s core knows no Fastify, no routes and no plugins' }] }]
    }
  },
  {
    // the qualification cannot mutate or write by construction (docs/design.md#walls): no control
    // or ledger code, nor what pulls them in (the gateway's config, app, server, plugins, routes);
    // test/qualify/import-wall.test.ts checks the transitive imports
    files: ['src/qualify/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/control/**', '**/ledger/**', '../config*', '../app*', '../server*', '**/plugins/**', '**/routes/**', 'fastify', 'fastify-*', '@fastify/*'], message: 'the qualification imports no control or ledger code, nor the gateway that holds it' }] }]
    }
  },
  {
    files: ['src/qualify/*/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/control/**', '**/ledger/**', '../../config*', '../../app*', '../../server*', '**/plugins/**', '**/routes/**', 'fastify', 'fastify-*', '@fastify/*'], message: 'the qualification imports no control or ledger code, nor the gateway that holds it' }] }]
    }
  },
  {
    // at any depth of src/simulator/ (its rooms are folders); test/simulator/no-circles.test.ts
    // also checks that no import path leaves it but for schemas/
    files: ['src/simulator/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(\\.\\./)+((upstream|discovery|argus|control|config)(/|$)|core/errors)', message: 'the simulator shares no wire or rule code with the gateway' }] }]
    }
  }
)
