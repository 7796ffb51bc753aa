// Structurally unable to mutate (docs/design.md#walls): walks the static imports of every
// module under src/qualify/ transitively (test/helpers/import-graph.ts: relative specifiers,
// resolved the way NodeNext resolves `.js` to the `.ts` source) and proves none resolves into
// src/control/ or src/ledger/ — nor into any file of src/config/, the gateway's configuration,
// which the qualification has its own of (src/qualify/config.ts). eslint enforces the direct
// imports; this test also catches an indirect path through a third module.
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { closure, root, specifiersOf, tsFilesUnder } from '../helpers/import-graph.js'

const FORBIDDEN = ['src/control/', 'src/ledger/', 'src/config/']

describe('src/qualify imports no control or ledger code', () => {
  const entries = tsFilesUnder(join(root, 'src/qualify'))

  it('finds the qualify modules and their imports', () => {
    expect(entries.map((e) => relative(root, e))).toContain('src/qualify/command.ts')
    expect(specifiersOf("import { a } from './a.js'\nimport type { B } from \"../b.js\"\nexport { c } from './c.js'\nconst d = await import('./d.js')")).toEqual(['./a.js', '../b.js', './c.js', './d.js'])
  })

  it('no module reachable from src/qualify/ lies in src/control/, src/ledger/ or src/config/', () => {
    const reached = closure(entries)
    const bad = [...reached].filter(([file]) => FORBIDDEN.some((f) => relative(root, file).startsWith(f)))
    expect(bad.map(([, chain]) => chain.join(' -> '))).toEqual([])
  })

  it('the walk would catch an indirect path: from the CLI, which starts the gateway, it reaches all three', () => {
    const reached = [...closure([join(root, 'src/cli/index.ts')]).keys()].map((f) => relative(root, f))
    for (const f of FORBIDDEN) expect(reached.some((r) => r.startsWith(f)), f).toBe(true)
  })
})
