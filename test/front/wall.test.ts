// The front door's wall (docs/api.md#a2a-front-door): its core, and everything it imports however
// deep, knows no Fastify, no routes and no plugins, so one request in and one answer out can run
// anywhere (eslint.config.js holds its direct imports; this holds every path). routes/a2a.ts is
// the only place it meets the web framework.
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { resolveRelative, specifiersOf, tsFilesUnder } from '../helpers/import-graph.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const FRAMEWORK = /^(fastify|fastify-.*|@fastify\/.*)$/

describe('the front door\'s core', () => {
  it('reaches no Fastify package, no route and no plugin through any chain of imports', () => {
    const seen = new Map<string, string[]>()
    const queue: Array<[string, string[]]> = tsFilesUnder(join(root, 'src/front')).map((f) => [f, [relative(root, f)]])
    const bad: string[] = []
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
      const [file, chain] = item
      if (seen.has(file)) continue
      seen.set(file, chain)
      const where = relative(root, file).split(sep).join('/')
      if (/^(routes|src\/plugins)\//.test(where)) bad.push(chain.join(' → '))
      for (const spec of specifiersOf(readFileSync(file, 'utf8'))) {
        if (FRAMEWORK.test(spec)) bad.push([...chain, spec].join(' → '))
        const next = resolveRelative(file, spec)
        if (next !== undefined && !seen.has(next)) queue.push([next, [...chain, relative(dirname(file), next)]])
      }
    }
    expect(seen.size).toBeGreaterThan(20)
    expect(bad).toEqual([])
  })
})
