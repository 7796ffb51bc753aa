// The documents' shape (docs/design.md#development): README.md is the front page, docs/api.md the
// callers', docs/operating.md the operators', docs/design.md the contributors'. Checked here:
// the README stays short and keeps the two commands CI and a hook look for; every relative link
// of every document (the typed client's README included) resolves, its #anchor a heading by
// GitHub's slug rules or an explicit <a id>, and so does every `docs/<file>.md#<anchor>` cited
// anywhere in the repository (code comments cite design.md by anchor); an explicit <a id> sits on
// the heading it names (so a citation lands on its section); design.md's table of the contract's
// rules names files that exist, functions they hold and tests by their exact titles; the configuration table
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

/** a document's lines, those of fenced code blocks blanked (so line numbers stay) */
const proseLines = (md: string): string[] =>
  md.replace(/^[ \t]*(```|~~~)[^\n]*\n[\s\S]*?^[ \t]*\1[ \t]*$/gm, (block) => block.replace(/[^\n]/g, '')).split('\n')

const ATX_HEADING = /^ {0,3}#{1,6}[ \t]/
/** a line of nothing but `<a id>`s */
const ID_LINE = /^(?:<a id="[^"]+"><\/a>)+\s*$/
/** a paragraph led by a bold run-in heading, its `<a id>`s first: `<a id="x"></a>**Title.** …` */
const RUN_IN = /^(?:<a id="[^"]+"><\/a>)*\*\*(.+?)\*\*/

/**
 * Where each explicit `<a id>` of a document lands, and what is wrong with it, if anything. An id
 * must sit on the heading it names: in the heading's line (an ATX heading or a bold run-in heading
 * that opens its paragraph), or on lines of ids alone directly above it — several stacked are fine.
 * And it must name that heading: one of its words (three letters or more, not a number) begins as a
 * word of the heading begins, so an id left above the next section (as `hot-path` once sat above
 * "A2A front door") is refused. `aliases` are ids kept for a heading renamed since, checked by hand.
 */
function misplacedIds (md: string, file: string, aliases: ReadonlySet<string> = new Set()): string[] {
  const lines = proseLines(md)
  const problems: string[] = []
  const words = (text: string): string[] => text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w !== '')
  const names = (id: string, heading: string): boolean => {
    const headingWords = words(heading.replace(/<[^>]*>/g, ' '))
    return id.split('-').filter((w) => w.length >= 3 && !/^\d+$/.test(w))
      .some((w) => headingWords.some((h) => h.startsWith(w.slice(0, 4))))
  }
  lines.forEach((line, i) => {
    for (const m of line.matchAll(/<a id="([^"]+)"><\/a>/g)) {
      const id = m[1]!
      let heading: string | undefined
      if (ATX_HEADING.test(line)) heading = line
      else if (RUN_IN.test(line)) heading = RUN_IN.exec(line)![1]
      else if (ID_LINE.test(line)) {
        let next = i + 1
        while (next < lines.length && ID_LINE.test(lines[next]!)) next++
        const below = lines[next] ?? ''
        if (ATX_HEADING.test(below)) heading = below
        else if (RUN_IN.test(below)) heading = RUN_IN.exec(below)![1]
      }
      if (heading === undefined) problems.push(`${file}:${i + 1}: #${id} is on no heading (an <a id> goes in its heading's line, or on lines of ids alone directly above it)`)
      else if (!names(id, heading) && !aliases.has(`${file}#${id}`)) problems.push(`${file}:${i + 1}: #${id} sits on "${heading.trim()}", which it does not name`)
    }
  })
  return problems
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

  it('every BENCHMARKS.md#<anchor> or RELIABILITY.md#<anchor> cited outside Markdown resolves', () => {
    // a comment's figure lives in BENCHMARKS.md (docs/design.md#where-rules-live): its citation must land
    const broken: string[] = []
    let cited = 0
    for (const file of CITING.filter((f) => !f.endsWith('.md'))) {
      for (const m of read(file).matchAll(/\b(BENCHMARKS|RELIABILITY)\.md#([\w-]+)/g)) {
        cited++
        const problem = resolves(`${m[1]!}.md`, m[2])
        if (problem !== undefined) broken.push(`${file}: ${m[0]}: ${problem}`)
      }
    }
    expect(cited).toBeGreaterThan(10)
    expect(broken).toEqual([])
  })

  it('every <a id> sits on the heading it names', () => {
    // ids kept for headings renamed since: the routes are /v1/upstream, the records' routes
    const aliases = new Set(['docs/api.md#upstream', 'docs/api.md#request-routes'])
    const ids = DOCS.flatMap((doc) => [...read(doc).matchAll(/<a id="/g)])
    expect(ids.length).toBeGreaterThan(150)
    expect(DOCS.flatMap((doc) => misplacedIds(read(doc), doc, aliases))).toEqual([])
  })

  it('refuses an <a id> that is on no heading, or on one it does not name', () => {
    const md = [
      '# A document', '',
      // the defect this check was written for: an id left stacked above the next section's heading
      '<a id="hot-path"></a>', '<a id="front-door"></a>', '### A2A front door', '', 'Text.', '',
      '<a id="stray"></a>', 'A paragraph, not a heading.', '',
      'Prose with <a id="inline"></a> an id inside.', '',
      '<a id="single-shot"></a>**Single-shot on the wire.** A run-in heading.', '',
      '<a id="rules"></a>', '**The rules.** A run-in heading on the line below its id.', '',
      '```', '<a id="in-code"></a>', '```', '',
      '### Hot path <a id="hot-path-rules"></a>', '', '<a id="renamed"></a>', '## The remote'
    ].join('\n')
    expect(misplacedIds(md, 'a.md', new Set(['a.md#renamed']))).toEqual([
      'a.md:3: #hot-path sits on "### A2A front door", which it does not name',
      expect.stringMatching(/^a\.md:9: #stray is on no heading/),
      expect.stringMatching(/^a\.md:12: #inline is on no heading/)
    ])
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

describe('docs/design.md', () => {
  const doc = read('docs/design.md')
  const escaped = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

  /** the table of the contract's rules: § | rule | enforced in | proved by */
  const rows = section(doc, '### The contract\'s rules: where each is enforced, what proves it').split('\n')
    .filter((l) => /^\| \d+ \|/.test(l))
    .map((l) => {
      const [clause, rule, enforced, proved] = l.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim()) as [string, string, string, string]
      return { clause, rule, enforced, proved }
    })

  /** "`fn` in `path`" pairs and bare "`path`"s of a row's enforcing cell */
  const enforcers = (cell: string): Array<{ name?: string, path: string }> =>
    [...cell.matchAll(/`([^`]+)`(?: in `([^`]+)`)?/g)].map((m) => m[2] === undefined ? { path: m[1]! } : { name: m[1]!, path: m[2]! })

  /** a row's tests: each `test/…` path, then the "titles" of tests in it */
  const proofs = (cell: string): Array<{ path: string, title: string }> => {
    const out: Array<{ path: string, title: string }> = []
    let path: string | undefined
    for (const m of cell.matchAll(/`([^`]+)`|"([^"]+)"/g)) {
      if (m[1] !== undefined) path = m[1]
      else out.push({ path: path ?? '(no file named)', title: m[2]! })
    }
    return out
  }

  it('has a row for every rule of the contract\'s §6 and §12–§14, each naming where it is enforced and a test', () => {
    expect(rows.length).toBeGreaterThan(50)
    expect(new Set(rows.map((r) => r.clause))).toEqual(new Set(['6', '12', '13', '14']))
    for (const r of rows) {
      expect(enforcers(r.enforced).length, r.rule).toBeGreaterThan(0)
      expect(proofs(r.proved).length, r.rule).toBeGreaterThan(0)
    }
  })

  it('its rules table names source files that exist and hold the function named with them', () => {
    const broken: string[] = []
    for (const r of rows) {
      for (const { name, path } of enforcers(r.enforced)) {
        if (!existsSync(join(root, path))) broken.push(`${path} does not exist (${r.rule})`)
        else if (name !== undefined && !new RegExp(`\\b${escaped(name)}\\b`).test(read(path))) broken.push(`${path} has no ${name} (${r.rule})`)
      }
    }
    expect(broken).toEqual([])
  })

  it('its rules table names test files that exist and hold a test of exactly each title quoted', () => {
    const broken: string[] = []
    for (const r of rows) {
      for (const { path, title } of proofs(r.proved)) {
        if (!/^test\/.+\.ts$/.test(path) || !existsSync(join(root, path))) {
          broken.push(`${path} is no test file (${title})`)
          continue
        }
        // the title as the first argument of it/test/describe (it.skipIf(…)( too), quoted any way; a ' may be escaped
        const literal = escaped(title).replace(/'/g, "\\\\?'")
        const call = new RegExp(`\\b(?:it|test|describe)(?:\\.\\w+)*(?:\\([^()]*\\))?\\(\\s*(['"\`])${literal}\\1`)
        if (!call.test(read(path))) broken.push(`${path} has no test titled "${title}"`)
      }
    }
    expect(broken).toEqual([])
  })
})

describe('docs/operating.md', () => {
  const doc = read('docs/operating.md')

  it('its configuration table lists every variable src/config/ reads, and no other', () => {
    // every file of the configuration: the schema in one, the X / X_FILE pairs and env.X in others
    // (src/config/tracing.ts's OTEL_* below: one row, the others in "Tracing")
    const source = readdirSync(join(root, 'src/config')).filter((f) => f.endsWith('.ts') && f !== 'tracing.ts').sort().map((f) => read(`src/config/${f}`)).join('\n')
    const schemaStart = source.indexOf('const EnvSchema = z.object({')
    const schema = source.slice(schemaStart, source.indexOf('\n})', schemaStart))
    const reads = new Set([
      ...[...schema.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!),
      ...[...source.matchAll(/pick\('([A-Z0-9_]+)', '([A-Z0-9_]+)'\)/g)].flatMap((m) => [m[1]!, m[2]!]),
      ...[...source.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!)
    ])
    // tracing is read by loadConfig through src/config/tracing.ts: one row, the others in "Tracing"
    const tracing = [...read('src/config/tracing.ts').matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!)
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
