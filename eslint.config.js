import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import globals from 'globals'
import neostandard from 'neostandard'
import { LAYERS, foldersAbove } from './scripts/layers.js'

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
  'src/argus/**', 'src/upstream/**', 'src/callers/tokens.ts', 'src/core/json-text.ts', 'src/core/live-list.ts',
  'src/core/secret-match.ts', 'src/http/access-log.ts', 'src/http/request-id.ts', 'src/http/trusted-serializer.ts',
  'src/http/auth.ts', 'src/http/rate-limit.ts', 'src/http/lifecycle.ts', 'src/http/metrics.ts', 'src/http/secret-guard.ts',
  'src/http/load-shedding.ts', 'src/http/request-id-plugin.ts', 'src/http/edges-plugin.ts', 'routes/tasks.ts', 'routes/supervisor.ts'
]
const NO_OBJECT_SPREAD = {
  selector: 'ObjectExpression > SpreadElement',
  message: 'no object spread on the read path (docs/design.md#hot-path): Object.assign({}, ...) or a literal'
}

// an import that climbs (docs/design.md#layers): into a folder of the importer's own layer or one
// above it (scripts/layers.js), or into src/'s root files from any folder but the CLI
function climbing (folder) {
  const above = foldersAbove(folder)
  const folders = above.filter((f) => f !== '.')
  const alternatives = []
  if (folder === '.') alternatives.push('^\\./(' + folders.join('|') + ')(/|$)')
  else {
    if (folders.length > 0) alternatives.push('^(\\.\\./)+(' + folders.join('|') + ')(/|$)')
    if (above.includes('.')) alternatives.push('^(\\.\\./)+(app|server|shutdown)\\.js$')
  }
  return { regex: alternatives.join('|') || '^$.', message: `${folder === '.' ? "src/'s root" : `src/${folder}`} imports only folders of a lower layer (scripts/layers.js, docs/design.md#layers)` }
}

// each folder's own wall (docs/design.md#walls), beside the layers
const NO_FASTIFY = ['fastify', 'fastify-*', '@fastify/*', '**/routes/**']
const WALLS = {
  // config as data: the configuration reads the environment and the files it names with core
  // helpers, the schemas, and the simulator's option parser (the simulator importing nothing of
  // the gateway); it borrows no constant from a domain module, so nothing of the domain can circle back to it
  config: [{
    regex: '^\\.\\./(?!core/|\\.\\./schemas/|simulator/env-options\\.js$)',
    message: 'the configuration imports core/, schemas/ and the simulator\'s option parser, nothing else of the gateway'
  }],
  // protocol core and reads know no Fastify and no control code
  upstream: [{ group: NO_FASTIFY, message: 'protocol core and reads know no Fastify' }],
  discovery: [{ group: NO_FASTIFY, message: 'protocol core and reads know no Fastify' }],
  argus: [{ group: NO_FASTIFY, message: 'protocol core and reads know no Fastify' }],
  // tracing observes, it does not decide: what a mutation's answer means is handed in by the
  // upstream plugin, so no control or ledger code can run inside a span wrapper, and the config it
  // reads is the zod-only leaf (src/config/env.ts)
  tracing: [{ group: ['**/control/**', '**/ledger/**', '**/routes/**', '**/plugins/**', '../config/index*', '../config/load*'], message: 'tracing knows no control, ledger, route or plugin code; what it needs is handed in' }],
  control: [{ group: [...NO_FASTIFY, '**/plugins/**', '**/simulator/**'], message: 'the control plane and the ledger are plain factories: no Fastify, no routes, no simulator' }],
  // stores keep state; the control plane speaks: a store writes the answers it is handed
  // (LedgerOptions.ambiguousAnswer) and formats none of its own
  ledger: [{ group: [...NO_FASTIFY, '**/plugins/**', '**/simulator/**', '**/control/**'], message: 'the ledger is a plain store: no Fastify, no routes, no plugins, no simulator, no control code' }],
  // the A2A front door's core is the REST surface's twin on the same Fastify-free core
  // (docs/api.md#a2a-front-door): routes/a2a.ts wires it; test/front/wall.test.ts checks the transitive imports
  front: [{ group: [...NO_FASTIFY, '**/plugins/**'], message: 'the front door\'s core knows no Fastify, no routes and no plugins' }],
  // the qualification cannot mutate or write by construction: no control or ledger code, nor what
  // pulls them in (the gateway's config, app, server, plugins, routes); test/qualify/import-wall.test.ts checks the transitive imports
  qualify: [
    { group: ['**/control/**', '**/ledger/**', '**/plugins/**', ...NO_FASTIFY], message: 'the qualification imports no control or ledger code, nor the gateway that holds it' },
    { regex: '^(\\.\\./)+(config/|app\\.js$|server\\.js$)', message: 'the qualification imports no control or ledger code, nor the gateway that holds it' }
  ],
  // at any depth of src/simulator/ (its rooms are folders); test/simulator/no-circles.test.ts
  // also checks that no import path leaves it but for schemas/
  simulator: [{ regex: '^(\\.\\./)+((upstream|discovery|argus|control|config)(/|$)|core/errors)', message: 'the simulator shares no wire or rule code with the gateway' }]
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
    // parts a person holds (docs/design.md#parts): a function a reader can enter by its name and
    // keep in view — a factory is an assembly of named functions over an explicit state object
    files: ['src/**', 'console/src/**'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] }
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
    // the operator's console runs in a browser (docs/operating.md#console): its globals, and no way
    // to turn a string into markup or code — every string is a text node (console/src/dom.ts)
    files: ['console/src/**'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-eval': 'error',
      'no-implied-eval': 'error',
      'no-new-func': 'error',
      'no-restricted-globals': ['error', { name: 'DOMParser', message: 'the console parses no markup: build nodes with h() (console/src/dom.ts)' }],
      'no-restricted-properties': ['error',
        ...['innerHTML', 'outerHTML', 'insertAdjacentHTML', 'createContextualFragment', 'srcdoc', 'write', 'writeln'].map((property) => ({
          property,
          message: 'the console turns no string into markup: build nodes with h() and text (console/src/dom.ts)'
        }))]
    }
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
    // the plane asks the ledger for a capability (singleWriter), never which store it has
    files: ['src/control/**'],
    rules: { 'no-restricted-syntax': ['error', ONE_READ_CALL, { selector: 'Literal[value=/^(sqlite|postgres)$/]', message: 'the control plane names no store: ask the Ledger interface for the capability instead' }] }
  },
  // layers that point one way (docs/design.md#layers), with each folder's own wall: one block per
  // folder, since a later block's no-restricted-imports replaces an earlier one's for its files
  ...LAYERS.flat().map((folder) => ({
    files: folder === '.' ? ['src/*.ts'] : [`src/${folder}/**`],
    rules: { 'no-restricted-imports': ['error', { patterns: [climbing(folder), ...(WALLS[folder] ?? [])] }] }
  }))
)
