// No import circle in the gateway (docs/design.md#walls): among every module of src/, routes/ and
// schemas/, no file reaches itself through its imports, type-only ones included. A circle is a
// wall with a door in it: two parts that each know the other can no longer be read, tested or
// moved apart (the configuration and the tracing switch were one, by a type).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { importCircles, importGraph, root } from '../helpers/import-graph.js'
import { LAYERS, layerOf } from '../../scripts/layers.js'

describe('import circles', () => {
  it('the walk finds a circle, type-only imports and a file importing itself included', () => {
    const dir = mkdtempSync(join(tmpdir(), 'circles-'))
    try {
      mkdirSync(join(dir, 'sub'))
      writeFileSync(join(dir, 'a.ts'), "import { b } from './sub/b.js'\nexport const a = b\n")
      writeFileSync(join(dir, 'sub/b.ts'), "import type { C } from '../c.js'\nexport const b: C = 1\n")
      writeFileSync(join(dir, 'c.ts'), "export type C = number\nexport const c = await import('./a.js')\n")
      writeFileSync(join(dir, 'self.ts'), "export * from './self.js'\n")
      writeFileSync(join(dir, 'leaf.ts'), "import { a } from './a.js'\nexport const leaf = a\n")
      expect(importCircles(dir)).toEqual([['a.ts', 'c.ts', 'sub/b.ts'], ['self.ts']])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('src/, routes/ and schemas/ import in one direction only: no circle', () => {
    const circles = importCircles(root, { only: ['src', 'routes', 'schemas'] })
    expect(circles).toEqual([])
  })

  // layers that point one way (docs/design.md#layers): the folders of src/ as nodes
  const folderOf = (file: string): string => file.includes('/') ? file.slice(0, file.indexOf('/')) : '.'

  it('the folders of src/ form no circle either', () => {
    expect(importCircles(join(root, 'src'), { group: folderOf })).toEqual([])
  })

  it('every folder of src/ has a layer, and imports only folders of a lower one (the lint rule, checked from the graph)', () => {
    const graph = importGraph(join(root, 'src'), { group: folderOf })
    const unlisted = [...graph.keys()].filter((f) => f !== 'types' && layerOf(f) === undefined)
    expect(unlisted, 'each folder of src/ named in scripts/layers.js').toEqual([])
    const climbing = [...graph].flatMap(([from, tos]) => tos.filter((to) => layerOf(to)! >= layerOf(from)!).map((to) => `${from} -> ${to}`))
    expect(climbing).toEqual([])
    expect(LAYERS.flat().filter((f) => f !== '.' && !graph.has(f) && f !== 'console'), 'no layer names a folder that is gone').toEqual([])
  })
})
