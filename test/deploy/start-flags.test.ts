// The node flags the gateway runs with (docs/design.md#hot-path): `npm start` and the image's CMD
// start it the same way, and this Node accepts the flags. The bench reads them from `npm start`
// (bench/compare.ts), so what it measures is what is deployed.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { heapBudgetProblem } from '../../src/server.js'
import { DEFAULT_BODY_BUDGET_BYTES } from '../../src/upstream/client.js'

const MiB = 1024 * 1024

const root = fileURLToPath(new URL('../../', import.meta.url))
const ENTRY = 'dist/src/cli/index.js'

/** the words between `node` and the entry point */
const flagsBefore = (words: string[]): string[] => words.slice(words.indexOf('node') + 1, words.indexOf(ENTRY))

describe('start flags', () => {
  const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/)
  const cmdLine = readFileSync(join(root, 'docker/Dockerfile'), 'utf8').split('\n').find((l) => l.startsWith('CMD '))
  const cmd = JSON.parse(cmdLine!.slice(4)) as string[]

  it('npm start and the Dockerfile CMD run the same entry with the same node flags', () => {
    expect(start).toContain(ENTRY)
    expect(cmd).toContain(ENTRY)
    expect(flagsBefore(cmd)).toEqual(flagsBefore(start))
    expect(flagsBefore(start)).toContain('--max-semi-space-size=4')
    // the next mark-compact at 1.75 × what stayed live, not ~8 MiB above it (docs/design.md#hot-path)
    expect(flagsBefore(start)).toContain('--heap-growing-percent=75')
  })

  it('the old generation holds the default body budget\'s answers (docs/design.md#hot-path)', () => {
    const flag = flagsBefore(start).find((f) => f.startsWith('--max-old-space-size='))
    expect(flag).toBeDefined()
    const heapMiB = Number(flag!.split('=')[1])
    // what bodyBudgetFitsHeap asks of it, for the default budget
    expect(heapBudgetProblem(heapMiB * MiB, DEFAULT_BODY_BUDGET_BYTES)).toBeUndefined()
    expect(heapBudgetProblem(heapMiB * MiB, 2 * DEFAULT_BODY_BUDGET_BYTES)).toMatch(/--max-old-space-size/)
  })

  it('this Node accepts them', () => {
    const r = spawnSync(process.execPath, [...flagsBefore(start), '-e', 'process.exit(0)'], { encoding: 'utf8' })
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
  })
})
