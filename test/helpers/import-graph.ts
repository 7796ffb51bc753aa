// The gateway's relative-import graph, which the walls' tests walk (docs/design.md#walls). The
// specifiers of a module are found by TypeScript's own pre-processor (static imports, re-exports,
// `import type`, `import()` with a literal) and resolved the way NodeNext resolves them (`./x.js`
// to the `./x.ts` source beside it); packages are not followed. A type-only import counts: it ties
// the files together for a reader as much as any other. Built on it: the closure of a set of
// modules, the imports leaving a folder, and the circles among folders or among their groups.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

/** the repository's root, absolute */
export const root = fileURLToPath(new URL('../../', import.meta.url))

/** the .ts files under dir, recursively, as absolute paths (declaration files left out) */
export function tsFilesUnder (dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? tsFilesUnder(p) : p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : []
  })
}

/** every module specifier in a source text, in order */
export function specifiersOf (source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((f) => f.fileName)
}

/** the file a relative specifier names (absolute); undefined for a package, which cannot be gateway code */
export function resolveRelative (from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined
  const target = resolve(dirname(from), spec)
  for (const candidate of [target.replace(/\.js$/, '.ts'), `${target}.ts`, join(target, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return candidate
    } catch { /* try the next form */ }
  }
  // an import the walk cannot follow would hide whatever lies behind it: fail rather than skip
  throw new Error(`cannot resolve ${spec} from ${from}`)
}

/** the files a file imports relatively, absolute, in the order of its specifiers */
export function importsOf (file: string): string[] {
  return specifiersOf(readFileSync(file, 'utf8')).flatMap((spec) => resolveRelative(file, spec) ?? [])
}

/** relative to base, with forward slashes on every platform */
function rel (base: string, file: string): string {
  return relative(base, file).split(sep).join('/')
}

/**
 * Every module the entries (absolute) reach, each with the chain of imports (relative to the
 * root) that reached it first.
 */
export function closure (entries: string[]): Map<string, string[]> {
  const seen = new Map<string, string[]>()
  const queue = entries.map((e) => [e, [rel(root, e)]] as [string, string[]])
  for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
    const [file, chain] = item
    if (seen.has(file)) continue
    seen.set(file, chain)
    for (const next of importsOf(file)) if (!seen.has(next)) queue.push([next, [...chain, rel(root, next)]])
  }
  return seen
}

export interface GraphOptions {
  /** the folders under dir whose files make the graph, imports leaving them not followed; all of dir by default */
  only?: string[]
  /** each file's node (e.g. its folder), the graph then being between groups, self-edges dropped */
  group?: (file: string) => string
}

/** file -> the files of the graph it imports, all relative to dir, sorted (or their groups, with `group`) */
export function importGraph (dir: string, { only = ['.'], group = (f) => f }: GraphOptions = {}): Map<string, string[]> {
  const base = resolve(dir)
  const files = only.flatMap((f) => tsFilesUnder(resolve(base, f))).sort()
  const inside = new Set(files)
  const edges = new Map<string, Set<string>>()
  for (const file of files) {
    const from = group(rel(base, file))
    const targets = edges.get(from) ?? new Set<string>()
    edges.set(from, targets)
    for (const next of importsOf(file)) {
      if (!inside.has(next)) continue
      const to = group(rel(base, next))
      if (to !== from || next === file) targets.add(to)
    }
  }
  return new Map([...edges].map(([k, v]) => [k, [...v].sort()]))
}

/** The relative imports of files under dir that resolve outside it: `from` relative to dir, `to` absolute. */
export function importsLeaving (dir: string): Array<{ from: string; to: string }> {
  const base = resolve(dir)
  return tsFilesUnder(base).sort().flatMap((file) =>
    importsOf(file).filter((next) => !next.startsWith(base + sep)).map((to) => ({ from: rel(base, file), to })))
}

/**
 * The import circles of importGraph(dir, options): each a strongly connected component — nodes
 * that each reach all the others, so none can be read, tested or loaded before the rest — as a
 * sorted list, a file importing itself included; the largest first. Empty when the imports run
 * one way. With `group`, the circles are between groups (a folder importing a folder that imports
 * it back).
 */
export function importCircles (dir: string, options?: GraphOptions): string[][] {
  const graph = importGraph(dir, options)
  // Tarjan's algorithm, iterative so a deep chain cannot overflow the stack
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const onStack = new Set<string>()
  const stack: string[] = []
  const circles: string[][] = []
  let counter = 0
  const visit = (node: string): void => {
    index.set(node, counter)
    low.set(node, counter)
    counter++
    stack.push(node)
    onStack.add(node)
  }
  for (const start of graph.keys()) {
    if (index.has(start)) continue
    visit(start)
    const work: Array<[string, number]> = [[start, 0]]
    while (work.length > 0) {
      const frame = work[work.length - 1]!
      const [node, i] = frame
      const edges = graph.get(node)!
      if (i < edges.length) {
        frame[1]++
        const to = edges[i]!
        if (!index.has(to)) {
          visit(to)
          work.push([to, 0])
        } else if (onStack.has(to)) {
          low.set(node, Math.min(low.get(node)!, index.get(to)!))
        }
        continue
      }
      work.pop()
      const parent = work[work.length - 1]
      if (parent !== undefined) low.set(parent[0], Math.min(low.get(parent[0])!, low.get(node)!))
      if (low.get(node) !== index.get(node)) continue
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1 || edges.includes(node)) circles.push(component.sort())
    }
  }
  return circles.sort((a, b) => b.length - a.length || a[0]!.localeCompare(b[0]!))
}
