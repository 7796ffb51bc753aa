// The documents' shape (docs/design.md#development): README.md is the front page, docs/api.md the
// callers', docs/operating.md the operators', docs/design.md the contributors'. Checked here:
// the README stays short and keeps the two commands CI and a hook look for; every relative link
// of every document, and every `docs/<file>.md#<anchor>` cited anywhere in the repository (code
// comments cite design.md by anchor), resolves; the configuration table lists exactly the
// variables src/config.ts reads; docs/api.md documents every route the gateway serves, each with
// a curl; the README's tour runs every control route; the bench results the documents cite exist.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { startSimulator } from '../../src/simulator/index.js'
import { startGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const read = (path: string): string => readFileSync(join(root, path), 'utf8')

/** files under `dir` (relative to the root), without what is built, installed or recorded */
function walk (dir: string): string[] {
  const skip = new Set(['node_modules', 'dist', 'data', 'coverage', '.git', 'results', 'fixtures'])
  const out: string[] = []
  for (const name of readdirSync(join(root, dir))) {
    if (skip.has(name)) continue
    const path = join(dir, name)
    if (statSync(join(root, path)).isDirectory()) out.push(...walk(path))
    else out.push(path)
  }
  return out
}

/** the documents: the front page, the documents at the root and everything under docs/ */
const DOCS = ['README.md', 'BENCHMARKS.md', 'RELIABILITY.md', ...walk('docs').filter((f) => f.endsWith('.md'))]

/** where code and configuration may cite a document */
const CITING = [
  ...['src', 'routes', 'schemas', 'test', 'bench', 'scripts', 'docker', '.ci', 'docs'].flatMap(walk),
  'README.md', 'BENCHMARKS.md', 'RELIABILITY.md', 'eslint.config.js', 'package.json'
].filter((f) => /\.(ts|js|mjs|json|sh|ya?ml|md|conf|env)$|Dockerfile$|\.ci\/run$/.test(f))

/** targets that another branch is adding: checked once they exist */
const PENDING = new Set(['clients/typescript/README.md'])

/** the text without fenced code blocks (links and headings inside them are not links or headings) */
const prose = (md: string): string => md.replace(/^```[\s\S]*?^```/gm, '')

/** GitHub's anchor for a heading */
const slug = (heading: string): string =>
  heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')

/** each document's anchors, read once: hundreds of citations name the same few documents */
const anchors = new Map<string, Set<string>>()
function anchorsOf (file: string): Set<string> {
  const known = anchors.get(file)
  if (known !== undefined) return known
  const md = read(file)
  const ids = [...md.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!)
  const headings = [...prose(md).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!))
  const found = new Set([...ids, ...headings])
  anchors.set(file, found)
  return found
}

/** `path` (relative to the root) exists, and so does `anchor` in it when given */
function resolves (path: string, anchor: string | undefined): string | undefined {
  if (!existsSync(join(root, path))) return PENDING.has(path) ? undefined : `${path} does not exist`
  if (anchor === undefined || anchor === '') return undefined
  if (!path.endsWith('.md')) return `${path}#${anchor}: an anchor on a file that is not Markdown`
  return anchorsOf(path).has(anchor) ? undefined : `${path} has no anchor #${anchor}`
}

/** a section of a Markdown file: from its heading to the next heading of the same or a higher level */
function section (md: string, heading: string): string {
  const lines = md.split('\n')
  const start = lines.findIndex((l) => l === heading)
  if (start < 0) return ''
  const level = heading.indexOf(' ')
  const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && l.indexOf(' ') <= level)
  return lines.slice(start, end < 0 ? undefined : end).join('\n')
}

describe('the front page', () => {
  const readme = read('README.md')

  it('is at most 160 lines and keeps the two commands', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(160)
    expect(readme).toContain('npm install && npm start')
    expect(readme).toContain('npm install && npm test')
  })

  it('says on its first screen what the gateway is and for whom, and links every other document', () => {
    const first = readme.split('\n').slice(0, 25).join('\n')
    expect(first).toMatch(/REST gateway/)
    expect(first).toMatch(/OpenOperator/)
    expect(first).toMatch(/\*\*For\*\*/)
    for (const target of ['docs/api.md', 'docs/operating.md', 'docs/design.md', 'docs/runbooks/', 'RELIABILITY.md', 'BENCHMARKS.md', 'clients/typescript/README.md']) {
      expect(readme, target).toContain(`](${target}`)
    }
  })

  it('tours the reads, then every control route, in a curl each', () => {
    const curls = readme.replace(/\\\n\s*/g, ' ').split('\n').filter((l) => l.trimStart().startsWith('curl ')).join('\n')
    for (const read of ['/healthz', '/v1/supervisor/health', '/v1/supervisor/status', '/v1/campaigns ', '/v1/tasks/task-demo-1', '/v1/upstream']) expect(curls, read).toContain(read)
    for (const route of ['/control/claim', '/control/renew', '/submissions', '/interventions', '/cancel', '/requests?', '/reconcile', '/acknowledge', '/control/release', '$C/control\n']) {
      expect(`${curls}\n`, route).toContain(route)
    }
    expect(readme).toContain('SIMULATOR_PROFILE=campaign-control GATEWAY_CONTROL_ENABLED=true npm start')
  })
})

describe('links and citations', () => {
  it('every relative link of every document resolves, its anchor included', () => {
    const broken: string[] = []
    for (const doc of DOCS) {
      const text = prose(read(doc)).replace(/`[^`\n]*`/g, (code) => code.replace(/[[\]()]/g, ' '))
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!
        if (/^[a-z]+:/.test(target)) continue
        const [path, anchor] = target.split('#') as [string, string | undefined]
        const file = path === '' ? doc : relative(root, resolve(root, dirname(doc), path))
        const problem = resolves(file, anchor)
        if (problem !== undefined) broken.push(`${doc}: (${target}): ${problem}`)
      }
    }
    expect(broken).toEqual([])
  })

  it('every docs/<file>.md#<anchor> cited anywhere in the repository resolves', () => {
    const broken: string[] = []
    let cited = 0
    for (const file of CITING) {
      for (const m of read(file).matchAll(/\bdocs\/([\w./-]+\.md)(?:#([\w-]+))?/g)) {
        cited++
        const problem = resolves(`docs/${m[1]!}`, m[2])
        if (problem !== undefined) broken.push(`${file}: ${m[0]}: ${problem}`)
      }
    }
    expect(cited).toBeGreaterThan(300)
    expect(broken).toEqual([])
  })

  it('a citation of a README section names a section the README has', () => {
    const readmeHeadings = new Set([...prose(read('README.md')).matchAll(/^#+ (.+)$/gm)].map((m) => m[1]!))
    const broken: string[] = []
    for (const file of CITING) {
      // a comment's citation may wrap onto its next line
      const text = read(file).replace(/\n\s*(?:\/\/|#) ?/g, ' ')
      for (const m of text.matchAll(/README(?:\.md)?,? "([^"]+)"/g)) {
        if (!readmeHeadings.has(m[1]!)) broken.push(`${file}: ${m[0]}`)
      }
    }
    expect(broken).toEqual([])
  })

  it('every bench result a document cites is kept in bench/results/', () => {
    const cited = new Set(DOCS.flatMap((doc) => [...read(doc).matchAll(/\b(?:compare|soak)-\d{4}-\d\d-\d\dT[\d-]+Z\.(?:json|md)\b/g)].map((m) => m[0])))
    expect(cited.size).toBeGreaterThan(0)
    for (const name of cited) expect(existsSync(join(root, 'bench/results', name)), name).toBe(true)
  })
})

describe('docs/operating.md', () => {
  const doc = read('docs/operating.md')

  it('its configuration table lists every variable src/config.ts reads, and no other', () => {
    const source = read('src/config.ts')
    const schemaStart = source.indexOf('const EnvSchema = z.object({')
    const schema = source.slice(schemaStart, source.indexOf('\n})', schemaStart))
    const reads = new Set([
      ...[...schema.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!),
      ...[...source.matchAll(/pick\('([A-Z0-9_]+)', '([A-Z0-9_]+)'\)/g)].flatMap((m) => [m[1]!, m[2]!]),
      ...[...source.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!)
    ])
    // tracing is read by loadConfig through src/tracing/env.ts: one row, the others in "Tracing"
    const tracing = [...read('src/tracing/env.ts').matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!)
    const table = section(doc, '## Configuration')
    const rows = [...table.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]!)
    expect(reads.size).toBeGreaterThan(40)
    expect(new Set(rows).size, 'each variable once').toBe(rows.length)
    expect([...reads].filter((v) => !rows.includes(v)), 'missing from the table').toEqual([])
    expect(rows.filter((v) => !reads.has(v) && !tracing.includes(v)), 'in the table but not read').toEqual([])
    for (const v of tracing) expect(section(doc, '### Tracing') + table, v).toContain(v)
  })
})

describe('docs/api.md', () => {
  const api = read('docs/api.md')
  /** the text from each heading to the next one */
  const sections = api.split(/^(?=#{2,3} )/m)

  it('documents every route of /openapi.json, and the routes it leaves out, each with a curl', async () => {
    const sim = await startSimulator()
    const gw = await startGateway({ simulator: sim })
    try {
      const spec = (await call(`${gw.url}/openapi.json`)).body as { paths: Record<string, Record<string, unknown>> }
      const routes = Object.entries(spec.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => [m.toUpperCase(), path.replace(/\{(\w+)\}/g, ':$1')] as const))
      expect(routes.length).toBeGreaterThan(15)
      for (const [method, path] of [...routes, ['GET', '/healthz'], ['GET', '/readyz'], ['GET', '/openapi.json'], ['GET', '/docs'], ['GET', '/metrics']] as const) {
        const shown = path.replace('/v1/campaigns/:campaignId', '…')
        const own = sections.find((s) => s.split('\n')[0]!.includes(`\`${method} ${shown}\``))
        expect(own, `a heading for ${method} ${shown}`).toBeDefined()
        // the curl: $C for a campaign's routes, $G for the others, a value for each parameter
        const pattern = path
          .replace(/^\/v1\/campaigns\/:campaignId/, 'CAMPAIGN')
          .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
          .replace(/:\w+/g, '[^/\\s"?]+')
          .replace(/^CAMPAIGN/, '\\$C')
        const prefix = path.startsWith('/v1/campaigns/:campaignId') ? '' : path === '/metrics' ? 'http://127\\.0\\.0\\.1:9464' : '\\$G'
        const curls = own!.replace(/\\\n\s*/g, ' ').split('\n').filter((l) => l.startsWith('curl '))
        const curl = curls.find((l) => new RegExp(`${prefix}${pattern}(?=[\\s"?/]|$)`).test(l))
        expect(curl, `a curl of ${method} ${path}`).toBeDefined()
        if (method === 'POST') expect(curl, `${path} is a POST`).toMatch(/ -X POST | -d /)
      }
    } finally {
      await gw.close()
      await sim.close()
    }
  })

  it('names every error code of src/errors.ts in its status table', () => {
    const source = read('src/errors.ts')
    const codes = [...source.matchAll(/^ {2}([a-z_]+): \{ status: (\d+),/gm)].map((m) => [m[1]!, m[2]!] as const)
    const table = section(api, '### Status codes')
    expect(codes.length).toBeGreaterThan(40)
    for (const [code, status] of codes) {
      const row = table.split('\n').find((l) => l.startsWith(`| ${status} |`))
      expect(row, `the ${status} row`).toBeDefined()
      expect(row, code).toContain(`\`${code}\``)
    }
  })
})
