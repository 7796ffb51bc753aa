// Structurally unable to mutate (docs/design.md#walls): walks the static imports of every
// module under src/qualify/ transitively (relative specifiers, resolved the way NodeNext
// resolves `.js` to the `.ts` source) and proves none resolves into src/control/ or
// src/ledger/ — nor into src/config/index.ts, which imports ledger code. eslint enforces the direct
// imports; this test also catches an indirect path through a third module.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))
const FORBIDDEN = ['src/control/', 'src/ledger/']

function filesUnder (dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? filesUnder(p) : p.endsWith('.ts') ? [p] : []
  })
}

/** every import/export ... from '...' and import('...') with a string literal */
function specifiersOf (source: string): string[] {
  const out: string[] = []
  const re = /\b(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\s+from\s+)?['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g
  for (const m of source.matchAll(re)) out.push((m[1] ?? m[2])!)
  return out
}

function resolveLocal (from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined // a package: it cannot be gateway code
  const target = resolve(dirname(from), spec)
  for (const candidate of [target.replace(/\.js$/, '.ts'), `${target}.ts`, join(target, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return candidate
    } catch { /* try the next form */ }
  }
  throw new Error(`cannot resolve ${spec} from ${relative(root, from)}`)
}

function closure (entries: string[]): Map<string, string[]> {
  const seen = new Map<string, string[]>() // file -> the import chain that reached it
  const queue = entries.map((e) => [e, [relative(root, e)]] as [string, string[]])
  while (queue.length > 0) {
    const [file, chain] = queue.shift()!
    if (seen.has(file)) continue
    seen.set(file, chain)
    for (const spec of specifiersOf(readFileSync(file, 'utf8'))) {
      const next = resolveLocal(file, spec)
      if (next !== undefined && !seen.has(next)) queue.push([next, [...chain, relative(root, next)]])
    }
  }
  return seen
}

describe('src/qualify imports no control or ledger code', () => {
  const entries = filesUnder(join(root, 'src/qualify'))

  it('finds the qualify modules and their imports', () => {
    expect(entries.map((e) => relative(root, e))).toContain('src/qualify/command.ts')
    expect(specifiersOf("import { a } from './a.js'\nimport type { B } from \"../b.js\"\nexport { c } from './c.js'\nconst d = await import('./d.js')")).toEqual(['./a.js', '../b.js', './c.js', './d.js'])
  })

  it('no module reachable from src/qualify/ lies in src/control/ or src/ledger/', () => {
    const reached = closure(entries)
    const bad = [...reached].filter(([file]) => FORBIDDEN.some((f) => relative(root, file).startsWith(f)))
    expect(bad.map(([, chain]) => chain.join(' -> '))).toEqual([])
    // and it stays out of the gateway's config module, which imports ledger code
    expect([...reached.keys()].map((f) => relative(root, f))).not.toContain('src/config/index.ts')
  })

  it('the walk would catch an indirect path: from the CLI, which starts the gateway, it reaches both', () => {
    const reached = [...closure([join(root, 'src/cli/index.ts')]).keys()].map((f) => relative(root, f))
    expect(reached.some((f) => f.startsWith('src/control/'))).toBe(true)
    expect(reached.some((f) => f.startsWith('src/ledger/'))).toBe(true)
  })
})
