// The gateway's relative-import graph (docs/design.md#walls): the specifiers of a module, found by
// TypeScript's own pre-processor (static imports, re-exports, `import type`, `import()` with a
// literal), resolved the way NodeNext resolves them (`./x.js` to the `./x.ts` source beside it);
// packages are not followed. What the walls' tests walk: the closure of a set of modules, and
// the circles among a set of folders.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

export const root = fileURLToPath(new URL('../../', import.meta.url))

/** the .ts sources under dir, recursively, as absolute paths */
export function filesUnder (dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? filesUnder(p) : p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : []
  })
}

/** every module specifier in a source text, in order */
export function specifiersOf (source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((f) => f.fileName)
}

/** the source file a relative specifier names, or undefined for a package */
export function resolveLocal (from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined // a package: it cannot be gateway code
  const target = resolve(dirname(from), spec)
  for (const candidate of [target.replace(/\.js$/, '.ts'), `${target}.ts`, join(target, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return candidate
    } catch { /* try the next form */ }
  }
  throw new Error(`cannot resolve ${spec} from ${relative(root, from)}`)
}

const importsOf = (file: string): string[] =>
  specifiersOf(readFileSync(file, 'utf8')).flatMap((spec) => resolveLocal(file, spec) ?? [])

/** every module the entries reach, each with the chain of imports (relative paths) that reached it first */
export function closure (entries: string[]): Map<string, string[]> {
  const seen = new Map<string, string[]>()
  const queue = entries.map((e) => [e, [relative(root, e)]] as [string, string[]])
  while (queue.length > 0) {
    const [file, chain] = queue.shift()!
    if (seen.has(file)) continue
    seen.set(file, chain)
    for (const next of importsOf(file)) if (!seen.has(next)) queue.push([next, [...chain, relative(root, next)]])
  }
  return seen
}

/**
 * The import circles among the modules under the folders (relative to the repository, or
 * absolute): each a strongly connected component of their import graph — files that each reach
 * all the others, so none can be read, tested or loaded first — as sorted relative paths; a file
 * importing itself is one too. Imports leaving the folders are not followed.
 */
export function importCircles (folders: string[]): string[][] {
  const files = folders.flatMap((f) => filesUnder(resolve(root, f)))
  const inside = new Set(files)
  const edges = new Map(files.map((f) => [f, importsOf(f).filter((t) => inside.has(t))]))
  // Tarjan's algorithm, iterative so a long chain cannot overflow the stack
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const circles: string[][] = []
  let next = 0
  const visit = (file: string): void => {
    index.set(file, next); low.set(file, next); next++
    stack.push(file); onStack.add(file)
  }
  for (const start of files) {
    if (index.has(start)) continue
    visit(start)
    const work: Array<[string, number]> = [[start, 0]]
    while (work.length > 0) {
      const frame = work.at(-1)!
      const [file, i] = frame
      const out = edges.get(file)!
      if (i < out.length) {
        frame[1]++
        const to = out[i]!
        if (!index.has(to)) {
          visit(to)
          work.push([to, 0])
        } else if (onStack.has(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!))
        continue
      }
      work.pop()
      const parent = work.at(-1)
      if (parent !== undefined) low.set(parent[0], Math.min(low.get(parent[0])!, low.get(file)!))
      if (low.get(file) !== index.get(file)) continue
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(relative(root, member))
      } while (member !== file)
      if (component.length > 1 || out.includes(file)) circles.push(component.sort())
    }
  }
  return circles.sort((a, b) => a[0]!.localeCompare(b[0]!))
}
