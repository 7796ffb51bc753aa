// The documents' shape (docs/design.md#development): README.md is the front page, docs/api.md the
// callers', docs/operating.md the operators', docs/design.md the contributors'. Checked here:
// the README stays short and keeps the two commands CI and a hook look for; every relative link
// of every document (the typed client's README included) resolves, its #anchor a heading by
// GitHub's slug rules or an explicit <a id>, and so does every `docs/<file>.md#<anchor>` cited
// anywhere in the repository (code comments cite design.md by anchor); the configuration table
// lists exactly the variables the configuration reads; docs/api.md documents every route the
// gateway serves, each with a curl; the README's tour runs every control route; every file in
// bench/results/ is cited by a document, and every cited one is kept.
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

/** the documents: the front page, the documents at the root, everything under docs/ and the typed client's README */
const DOCS = ['README.md', 'BENCHMARKS.md', 'RELIABILITY.md', ...walk('docs').filter((f) => f.endsWith('.md')), 'clients/typescript/README.md']

/** where code and configuration may cite a document */
const CITING = [
  ...['src', 'routes', 'schemas', 'test', 'bench', 'scripts', 'docker', '.ci', 'docs'].flatMap(walk),
  'README.md', 'BENCHMARKS.md', 'RELIABILITY.md', 'eslint.config.js', 'package.json'
].filter((f) => /\.(ts|js|mjs|json|sh|ya?ml|md|conf|env)$|Dockerfile$|\.ci\/run$/.test(f))

/** the text without fenced code blocks, indented ones in list items too (links and headings inside them are not links or headings) */
const prose = (md: string): string => md.replace(/^[ \t]*(```|~~~)[^\n]*\n[\s\S]*?^[ \t]*\1[ \t]*$/gm, '')

/**
 * GitHub's anchors for a document's headings, in order (github-slugger's rules, which no package in
 * node_modules provides): the heading as rendered — HTML tags dropped, a link or image by its text —
 * lower-cased; every character that is not a letter, a mark, a number, a connector (`_`), a hyphen or
 * a space dropped (so `—` and `.` go, and `a — b` is `a--b`); each space a hyphen; a slug seen before
 * in the document gets `-1`, `-2`, ….
 */
function githubSlugs (headings: string[]): string[] {
  const occurrences = new Map<string, number>()
  return headings.map((heading) => {
    const text = heading
      .replace(/\s+#+\s*$/, '')
      .replace(/<[^>]*>/g, '')
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .trim()
    const base = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-')
    let slug = base
    while (occurrences.has(slug)) {
      const n = occurrences.get(base)! + 1
      occurrences.set(base, n)
      slug = `${base}-${n}`
    }
    occurrences.set(slug, 0)
    return slug
  })
}

/** each document's anchors, read once: hundreds of citations name the same few documents */
const anchors = new Map<string, Set<string>>()
function anchorsOf (file: string): Set<string> {
  const known = anchors.get(file)
  if (known !== undefined) return known
  const md = read(file)
  const ids = [...md.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!)
  const headings = githubSlugs([...prose(md).matchAll(/^ {0,3}#{1,6}[ \t]+(.+)$/gm)].map((m) => m[1]!))
  const found = new Set([...ids, ...headings])
  anchors.set(file, found)
  return found
}

/** the relative links of a document's prose: inline `[text](target)` and reference definitions `[ref]: target` */
function relativeLinks (md: string): string[] {
  const text = prose(md).replace(/`[^`\n]*`/g, (code) => code.replace(/[[\]()]/g, ' '))
  const targets = [
    ...[...text.matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!),
    ...[...text.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map((m) => m[1]!)
  ]
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t))
}

/** `path` (relative to the root) exists, and so does `anchor` in it when given */
function resolves (path: string, anchor: string | undefined): string | undefined {
  if (!existsSync(join(root, path))) return `${path} does not exist`
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
  it('slugs headings as GitHub does', () => {
    expect(githubSlugs([
      '`GET /readyz` — readiness',
      'The read hot path, third round (2026-12-03)',
      "The secret guard's search, every form a decoder accepts (2026-12-03)",
      'Step 5 — if `request_status` is not advertised, or reconcile keeps failing: acknowledge',
      'Replays: `Idempotent-Replayed`',
      '[A link](https://example.com) and <a id="x"></a>HTML',
      'Café naïve ünïcode',
      'snake_case stays',
      'Closed ##',
      'Twice', 'Twice', 'Twice'
    ])).toEqual([
      'get-readyz--readiness',
      'the-read-hot-path-third-round-2026-12-03',
      'the-secret-guards-search-every-form-a-decoder-accepts-2026-12-03',
      'step-5--if-request_status-is-not-advertised-or-reconcile-keeps-failing-acknowledge',
      'replays-idempotent-replayed',
      'a-link-and-html',
      'café-naïve-ünïcode',
      'snake_case-stays',
      'closed',
      'twice', 'twice-1', 'twice-2'
    ])
  })

  it('every relative link of every document resolves, its anchor included', () => {
    const broken: string[] = []
    let links = 0
    for (const doc of DOCS) {
      for (const target of relativeLinks(read(doc))) {
        links++
        const [path, anchor] = target.split('#') as [string, string | undefined]
        const file = path === '' ? doc : relative(root, resolve(root, dirname(doc), decodeURI(path)))
        const problem = resolves(file, anchor === undefined ? undefined : decodeURIComponent(anchor))
        if (problem !== undefined) broken.push(`${doc}: (${target}): ${problem}`)
      }
    }
    expect(links).toBeGreaterThan(200)
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

  it('every bench result a document cites is kept in bench/results/, and every one kept is cited', () => {
    const cited = new Set(DOCS.flatMap((doc) => [...read(doc).matchAll(/\b(?:compare|soak)-\d{4}-\d\d-\d\dT[\d-]+Z\.(?:json|md)\b/g)].map((m) => m[0])))
    expect(cited.size).toBeGreaterThan(0)
    for (const name of cited) expect(existsSync(join(root, 'bench/results', name)), name).toBe(true)
    const kept = readdirSync(join(root, 'bench/results')).filter((name) => statSync(join(root, 'bench/results', name)).isFile())
    expect(kept.length).toBeGreaterThan(0)
    expect(kept.filter((name) => !cited.has(name)), 'kept in bench/results/ but cited by no document').toEqual([])
  })
})

describe('docs/operating.md', () => {
  const doc = read('docs/operating.md')

  it('its configuration table lists every variable src/config/ reads, and no other', () => {
    // every file of the configuration: the schema in one, the X / X_FILE pairs and env.X in others
    const source = readdirSync(join(root, 'src/config')).filter((f) => f.endsWith('.ts')).sort().map((f) => read(`src/config/${f}`)).join('\n')
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

  it('names every error code of src/core/errors.ts in its status table', () => {
    const source = read('src/core/errors.ts')
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
