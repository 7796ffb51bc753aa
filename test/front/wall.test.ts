// The front door's wall (docs/api.md#a2a-front-door): its core, and everything it imports however
// deep, knows no Fastify, no routes and no plugins, so one request in and one answer out can run
// anywhere (eslint.config.js holds its direct imports; this holds every path). routes/a2a.ts is
// the only place it meets the web framework.
import { join } from 'node:path'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { closure, root, specifiersOf, tsFilesUnder } from '../helpers/import-graph.js'

const FRAMEWORK = /^(fastify|fastify-.*|@fastify\/.*)$/

describe('the front door\'s core', () => {
  it('reaches no Fastify package, no route and no plugin through any chain of imports', () => {
    const reached = closure(tsFilesUnder(join(root, 'src/front')))
    const bad: string[] = []
    for (const [file, chain] of reached) {
      if (/^(routes|src\/plugins)\//.test(chain.at(-1)!)) bad.push(chain.join(' → '))
      // a package is not followed, so its name is checked where it is imported
      for (const spec of specifiersOf(readFileSync(file, 'utf8'))) {
        if (FRAMEWORK.test(spec)) bad.push([...chain, spec].join(' → '))
      }
    }
    expect(reached.size).toBeGreaterThan(20)
    expect(bad).toEqual([])
  })
})
