// The layers of src/ (docs/design.md#layers), lowest first. A folder imports only folders of a
// lower layer, never one of its own layer nor above: eslint.config.js turns this list into a lint
// rule per folder, and test/unit/import-circles.test.ts checks the folder graph has no circle and
// points down this list. `.` is src/'s root (the app, the server, the shutdown), `types` holds
// declaration files only.
export const LAYERS = [
  // leaf helpers: errors, logging, validation, the secret's forms, bodies, URLs, key sets
  ['core'],
  // a program of its own that imports nothing of the gateway; its option parser is shared with the configuration
  ['simulator'],
  // configuration as data, and the OpenAPI document
  ['config', 'openapi'],
  // the A2A protocol client, then what the remote says it is, then reads (and task reads) on it
  ['upstream'],
  ['discovery'],
  ['argus', 'qualify'],
  // who calls, what was done, what was seen
  ['callers', 'ledger', 'tracing'],
  // the control plane, then the A2A front door over it
  ['control'],
  ['front'],
  // the HTTP edges, each plugin beside its logic, and the console's static pages
  ['http', 'console'],
  // the wiring of the domain's parts into Fastify
  ['plugins'],
  ['.'],
  ['cli']
]

/** the layer index of a folder of src/ ('.' for a file at its root); undefined when not listed */
export function layerOf (folder) {
  const i = LAYERS.findIndex((layer) => layer.includes(folder))
  return i === -1 ? undefined : i
}

/** the folders a folder may not import: its own layer's others and every layer above */
export function foldersAbove (folder) {
  const own = layerOf(folder)
  return LAYERS.slice(own).flat().filter((f) => f !== folder)
}
