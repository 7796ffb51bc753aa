// The simulator's imports run one way (docs/design.md#walls): no file reaches itself through its
// imports, and its rooms (books/, rpc/, extensions/, cards/, wire/, routes/, each file at the
// root on its own) import each other in one direction only, so each can be read and tested
// knowing only what it imports. And it shares no code with the gateway: no relative import leaves
// src/simulator/ but for schemas/ (eslint holds the direct imports of gateway parts; this holds
// every path). The graph is test/helpers/import-graph.ts; the same check runs over all of src/.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { importCircles, importGraph, importsLeaving, root } from '../helpers/import-graph.js'

const simulator = join(root, 'src/simulator')

/** a file in a folder belongs to the folder's room; a file at the root is a room of its own */
const roomOf = (file: string): string => (file.includes('/') ? file.slice(0, file.indexOf('/')) : file)

describe('the import graph helper', () => {
  const parent = mkdtempSync(join(tmpdir(), 'import-graph-'))
  const dir = join(parent, 'pkg')
  afterAll(() => rmSync(parent, { recursive: true, force: true }))
  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  write('a.ts', "import { b } from './b.js'\nexport const a = b\n")
  write('b.ts', "import type { A } from './sub/c.js'\nexport const b = 1\nexport type B = A\n")
  write('sub/c.ts', "export type A = number\nexport async function c () { return await import('../a.js') }\n")
  write('self.ts', "export * from './self.js'\n")
  write('tree.ts', "import { a } from './a.js'\nimport { z } from 'zod'\nimport { outside } from '../outside.js'\nexport const t = [a, z, outside]\n")
  write('../outside.ts', 'export const outside = 0\n')

  it('finds static, type-only, re-exported and dynamic imports, and nothing of packages or beyond the folder', () => {
    expect(Object.fromEntries(importGraph(dir))).toEqual({
      'a.ts': ['b.ts'],
      'b.ts': ['sub/c.ts'],
      'self.ts': ['self.ts'],
      'sub/c.ts': ['a.ts'],
      'tree.ts': ['a.ts']
    })
    expect(importsLeaving(dir)).toEqual([{ from: 'tree.ts', to: join(parent, 'outside.ts') }])
  })

  it('reports each circle once, a self-import included, and none for a file that only imports into one', () => {
    expect(importCircles(dir)).toEqual([['a.ts', 'b.ts', 'sub/c.ts'], ['self.ts']])
  })

  it('groups files, so a folder importing a folder that imports it back is one circle', () => {
    expect(importCircles(dir, { group: roomOf })).toEqual([['a.ts', 'b.ts', 'sub'], ['self.ts']])
  })
})

describe('the simulator', () => {
  it('has no import circle', () => {
    expect(importCircles(simulator)).toEqual([])
  })

  it('has rooms that import each other one way', () => {
    expect(importCircles(simulator, { group: roomOf })).toEqual([])
    // the rooms it is built of are the ones the walk saw
    const rooms = [...importGraph(simulator, { group: roomOf }).keys()].filter((r) => !r.endsWith('.ts'))
    expect(rooms.sort()).toEqual(['books', 'cards', 'extensions', 'routes', 'rpc', 'wire'])
  })

  it('imports nothing of the gateway (schemas at most)', () => {
    expect(importsLeaving(simulator).filter((e) => !relative(root, e.to).startsWith('schemas/'))).toEqual([])
  })
})

describe('all of src/', () => {
  it('has no import circle, through the simulator or elsewhere (test/unit/import-circles.test.ts walks routes/ and schemas/ too)', () => {
    expect(importCircles(join(root, 'src'))).toEqual([])
  })
})
