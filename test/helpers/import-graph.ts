// The relative-import graph of a source folder, and the circles in it (docs/design.md#walls).
// A circle is a strongly connected component: files that each reach all the others through
// their imports, so none can be read, tested or loaded before the rest. Specifiers are found by
// TypeScript's own pre-processor (static imports, re-exports, `import type`, `import()`), and
// resolved the way NodeNext resolves them: `./x.js` to the `./x.ts` source beside it. A type-only
// import counts: it ties the files together for a reader as much as any other.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import ts from 'typescript'

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

/** the file a relative specifier names (absolute); undefined for a package */
export function resolveRelative (from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined
  const target = resolve(dirname(from), spec)
  for (const candidate of [target.replace(/\.js$/, '.ts'), `${target}.ts`, join(target, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return candidate
    } catch { /* try the next form */ }
  }
  throw new Error(`cannot resolve ${spec} from ${from}`)
}

/** relative to root, with forward slashes on every platform */
function rel (root: string, file: string): string {
  return relative(root, file).split(sep).join('/')
}

/**
 * file -> the files under dir it imports, both relative to dir, sorted. With `group`, each file
 * becomes its group's name (e.g. its folder) and the graph is between groups, self-edges dropped.
 */
export function importGraph (dir: string, group: (file: string) => string = (f) => f): Map<string, string[]> {
  const root = resolve(dir)
  const files = tsFilesUnder(root).sort()
  const inside = new Set(files)
  const edges = new Map<string, Set<string>>()
  for (const file of files) {
    const from = group(rel(root, file))
    const targets = edges.get(from) ?? new Set<string>()
    edges.set(from, targets)
    for (const spec of specifiersOf(readFileSync(file, 'utf8'))) {
      const next = resolveRelative(file, spec)
      if (next === undefined || !inside.has(next)) continue
      const to = group(rel(root, next))
      if (to !== from || next === file) targets.add(to)
    }
  }
  return new Map([...edges].map(([k, v]) => [k, [...v].sort()]))
}

/** The relative imports of files under dir that resolve outside it: `from` relative to dir, `to` absolute. */
export function importsLeaving (dir: string): Array<{ from: string; to: string }> {
  const root = resolve(dir)
  const out: Array<{ from: string; to: string }> = []
  for (const file of tsFilesUnder(root).sort()) {
    for (const spec of specifiersOf(readFileSync(file, 'utf8'))) {
      const next = resolveRelative(file, spec)
      if (next !== undefined && !next.startsWith(root + sep)) out.push({ from: rel(root, file), to: next })
    }
  }
  return out
}

/**
 * The import circles under dir: each a sorted list of the files (relative to dir) of one strongly
 * connected component of the import graph, a file importing itself included; the largest first.
 * Empty when the imports run one way. With `group`, the circles are between groups (a folder
 * importing a folder that imports it back), as importGraph builds them.
 */
export function importCircles (dir: string, group?: (file: string) => string): string[][] {
  const graph = importGraph(dir, group)
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
