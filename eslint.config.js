import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import globals from 'globals'
import neostandard from 'neostandard'

// one read call (docs/design.md#walls): every read on the upstream goes through readRpc
// (src/argus/read-rpc.ts), so a read's failures map to contract errors one way, whichever read
const ONE_READ_CALL = {
  selector: "CallExpression[callee.property.name='rpc'] Property[key.name='kind'][value.value='read']",
  message: 'a read on the upstream goes through readRpc (src/argus/read-rpc.ts): one copy of its error mapping'
}

// no object spread where a read runs (docs/design.md#hot-path): on Node 20's V8 a spread followed by
// more properties, `{ ...call, kind }`, takes a slow path (~0.8 µs, ~19 k instructions, ~0.2 KB
// promoted into the old generation per read); Object.assign or a literal builds the same object
// without it, on Node 24 too (where the spread is fast). The files every read runs through:
const READ_PATH = [
  'src/argus/**', 'src/tasks/**', 'src/upstream/**', 'src/callers/tokens.ts', 'src/core/json-text.ts', 'src/core/live-list.ts',
  'src/core/secret-match.ts', 'src/http/access-log.ts', 'src/http/request-id.ts', 'src/http/trusted-serializer.ts',
  'src/plugins/auth.ts', 'src/plugins/rate-limit.ts', 'src/plugins/lifecycle.ts', 'src/plugins/metrics.ts', 'src/plugins/secret-guard.ts',
  'src/plugins/load-shedding.ts', 'src/plugins/request-id.ts', 'src/plugins/http-edges.ts', 'routes/tasks.ts', 'routes/supervisor.ts'
]
const NO_OBJECT_SPREAD = {
  selector: 'ObjectExpression > SpreadElement',
  message: 'no object spread on the read path (docs/design.md#hot-path): Object.assign({}, ...) or a literal'
}

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
    files: ['src/**', 'routes/**'],
    ignores: ['src/argus/read-rpc.ts', 'src/simulator/**'],
    rules: { 'no-restricted-syntax': ['error', ONE_READ_CALL] }
  },
  {
    // (a later block's no-restricted-syntax replaces an earlier one's: both rules again here)
    files: READ_PATH,
    // a2a-wire.ts copies the remote's own objects (v1.0 to v0.3), where a spread's semantics are
    // wanted: a `__proto__` key of the remote's stays a data property, where Object.assign would set
    // the copy's prototype
    ignores: ['src/argus/read-rpc.ts', 'src/upstream/a2a-wire.ts'],
    rules: { 'no-restricted-syntax': ['error', ONE_READ_CALL, NO_OBJECT_SPREAD] }
  },
  {
    files: ['src/argus/read-rpc.ts'],
    rules: { 'no-restricted-syntax': ['error', NO_OBJECT_SPREAD] }
  },
  {
    files: ['src/cli/**', 'scripts/**', 'bench/**', 'test/**', 'clients/typescript/examples/**', 'clients/a2a-example/**'],
    rules: { 'no-console': 'off' }
  },
  {
    // schemas are leaves (docs/design.md#walls): zod and one another, and of the gateway's code only
    // the error table, itself a leaf; the mutation vocabulary they share with the ledger lives
    // here (schemas/mutations.ts), so a body's enum never pulls store code in
    files: ['schemas/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { regex: '^\\.\\./src/(?!core/errors\\.js$)', message: 'schemas are leaves: nothing of src/ but the error table (src/core/errors.ts)' },
          { group: ['../routes/**', 'fastify', 'fastify-*', '@fastify/*'], message: 'schemas are leaves: no routes, no Fastify' }
        ]
      }]
    }
  },
  {
    // config as data (docs/design.md#walls): the configuration reads the environment and the files
    // it names with core helpers and the few parsers it shares with what re-reads the same input
    // (callers, key sets, the upstream URL, the tracing switch, the simulator's options); it
    // borrows no constant from a domain module, so nothing of the domain can circle back to it
    files: ['src/config/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{
          regex: '^\\.\\./(?!core/|\\.\\./schemas/|callers/static\\.js$|discovery/trusted-keys\\.js$|upstream/url\\.js$|tracing/env\\.js$|simulator/env-options\\.js$|http/redact-url\\.js$|front/signing-key\\.js$)',
          message: 'the configuration imports core/, schemas/ and the parsers it shares (callers/static, discovery/trusted-keys, upstream/url, tracing/env, simulator/env-options, http/redact-url, front/signing-key), nothing else of the gateway'
        }]
      }]
    }
  },
  {
    files: ['src/upstream/**', 'src/discovery/**', 'src/argus/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['fastify', '**/routes/**', '**/plugins/**', '**/control/**'], message: 'protocol core and reads know no Fastify and no control code' }] }]
    }
  },
  {
    // tracing observes, it does not decide (docs/design.md#walls): what a mutation's answer means
    // is handed in by the upstream plugin, so no control or ledger code can run inside a span
    // wrapper, and the config it reads is the zod-only leaf (src/config/env.ts)
    files: ['src/tracing/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/control/**', '**/ledger/**', '**/routes/**', '**/plugins/**', '../config/index*', '../config/load*'], message: 'tracing knows no control, ledger, route or plugin code; what it needs is handed in' }] }]
    }
  },
  {
    files: ['src/control/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['fastify', 'fastify-*', '@fastify/*', '**/routes/**', '**/plugins/**', '**/simulator/**'], message: 'the control plane and the ledger are plain factories: no Fastify, no routes, no simulator' }] }],
      // the plane asks the ledger for a capability (singleWriter), never which store it has
      'no-restricted-syntax': ['error', ONE_READ_CALL, { selector: 'Literal[value=/^(sqlite|postgres)$/]', message: 'the control plane names no store: ask the Ledger interface for the capability instead' }]
    }
  },
  {
    // stores keep state; the control plane speaks (docs/design.md#walls): a store writes the
    // answers it is handed (LedgerOptions.ambiguousAnswer) and formats none of its own
    files: ['src/ledger/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['fastify', 'fastify-*', '@fastify/*', '**/routes/**', '**/plugins/**', '**/simulator/**', '**/control/**'], message: 'the ledger is a plain store: no Fastify, no routes, no plugins, no simulator, no control code' }] }]
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
