// npm run bench -- --secret-guard (or npx tsx bench/secret-guard.ts): what the secret guard
// (docs/design.md#secret-echo) costs per answer, in ns per check on a typical 2 KiB answer that
// does not carry the secret (the common case: the whole text is scanned) — the raw and
// JSON-escaped forms alone (one `includes` each, the guard before it knew encodings); every form
// as the guard searches them now (src/core/secret-match.ts), also on bytes and as parseRpc's search
// of an upstream answer; the same on an answer holding `%` and `&` (the escaped text forms searched,
// and the text once percent-decoded) and on one holding JSON-escaped line breaks; and the
// alternatives the byte encodings' search was measured against: each form anchored on its own
// rarest character (one pass per form), one regular expression per form with what a decoder skips
// allowed between every two characters, and the whole text normalised once (whitespace stripped,
// case folded) and each needle searched in it. The log scrubber's search of one access line (~310
// bytes), before and now. For each of several random secrets, the median of 5 runs of 20,000 checks
// after a warm-up.
import { randomBytes } from 'node:crypto'
import { answerCarriesSecret, secretMatcher } from '../src/core/secret-match.js'
import { anchors, byteForms } from '../src/core/secret-encodings.js'
import { matchAt } from '../src/core/secret-reading.js'

const RUNS = 5
const CHECKS = Number(process.env.BENCH_GUARD_CHECKS ?? 20_000)
const SECRETS = Number(process.env.BENCH_GUARD_SECRETS ?? 12)

/** an answer shaped like a task projection, ~2 KiB, with words, ids, a URI and some base64 */
function typicalAnswer (bytes: number, uri = 'https://files.example/e?x=1'): string {
  const words = ['campaign', 'attempt', 'stage', 'evaluation', 'loss', 'metric', 'checkpoint', 'completed', 'run', 'the', 'of', 'and']
  const artifacts = []
  let i = 0
  while (JSON.stringify(artifacts).length < bytes - 300) {
    const text = Array.from({ length: 24 }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(' ')
    artifacts.push({ artifactId: `a-${i}`, name: `report-${i}.txt`, parts: [{ kind: 'text', text }, { kind: 'data', data: { step: i, loss: 0.1 * i, digest: randomBytes(12).toString('base64') } }] })
    i++
  }
  return JSON.stringify({ taskId: 'task-7f3a9c2e', contextId: 'ctx-1', state: 'completed', outcomeScope: 'attempt', supervisor: { revision: 3, stage: 'train', runId: 'run-1', attemptId: 'att-2', sourceSha: 'ab'.repeat(20), evidenceRevision: 1, evidenceRef: uri, blocked: false }, artifacts, artifactsTruncated: false })
}

function nsPerCheck (check: () => boolean): number {
  for (let i = 0; i < CHECKS; i++) if (check()) throw new Error('the answer carries the secret')
  const runs: number[] = []
  for (let r = 0; r < RUNS; r++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < CHECKS; i++) check()
    runs.push(Number(process.hrtime.bigint() - start) / CHECKS)
  }
  return runs.sort((a, b) => a - b)[Math.floor(RUNS / 2)]!
}

const answer = typicalAnswer(2048)
const escaped = typicalAnswer(2048, 'https://files.example/e?x=1&name=run%201')
const broken = answer.replace(/ of /g, '\\n')
/** the access line as src/http/access-log.ts writes it, ~310 bytes */
const ACCESS_LINE = JSON.stringify({ level: 30, time: Date.now(), pid: 4242, hostname: 'gw-7f3a9c2e', reqId: 'b1f0e2a4-8c1d-4a55-9b0e-0c2d7d1e5f6a', req: { method: 'GET', url: '/v1/tasks/task-7f3a9c2e', route: '/v1/tasks/:taskId', remoteAddress: '10.0.3.17', remotePort: 51234 }, res: { statusCode: 200 }, responseTime: 1.734, msg: 'request completed' })
const buffer = Buffer.from(answer)
const json = JSON.parse(answer) as unknown

/** the byte encodings found by one pass per anchor character over the text (the anchors as given) */
function anchored (byChar: Map<string, Parameters<typeof matchAt>[2][]>): (s: string) => boolean {
  const groups = [...byChar]
  return (s) => groups.some(([c, list]) => {
    for (let i = s.indexOf(c); i !== -1; i = s.indexOf(c, i + 1)) if (list.some((e) => matchAt(s, i, e) >= 0)) return true
    return false
  })
}

/** one expression per byte form, what a decoder skips allowed between every two characters (hex: between bytes), case folded where the alphabet has none */
function expressions (secret: string): RegExp[] {
  const skip = '(?:[ \\t\\r\\n]|\\\\+[nrt])*'
  return byteForms(secret).map((f) => {
    if (f.kind === 0) return new RegExp([...f.text].map((c) => c === '+' ? '[+-]' : c === '/' ? '[/_]' : c).join(skip))
    if (f.kind === 1) return new RegExp(f.text.match(/../g)!.join('(?:[ :\\-\\t\\r\\n]|\\\\+[nrt])*'), 'i')
    return new RegExp(f.text, 'i')
  })
}

// the cost moves with the secret (how often its characters start a partial match): several random ones
const rows = new Map<string, number[]>()
for (let k = 0; k < SECRETS; k++) {
  const secret = randomBytes(24).toString('base64url')
  const before = [...new Set([secret, JSON.stringify(secret).slice(1, -1)])]
  const matcher = secretMatcher(secret)
  const plain = new RegExp(secret.replace(/[-]/g, '\\-'))
  const forms = byteForms(secret)
  const shared = anchored(anchors(forms))
  const eachOwn = forms.map((f) => anchored(anchors([f])))
  const perForm = expressions(secret)
  const needles = forms.map((f) => f.kind === 0 ? f.text : f.text.toLowerCase())
  const normalised = (s: string): boolean => {
    const kept = s.replace(/[ \t\r\n]|\\+[nrt]/g, '')
    const folded = kept.replace(/[:-]/g, '').toLowerCase()
    return needles.some((n, i) => forms[i]!.kind === 0 ? kept.includes(n) : folded.includes(n))
  }
  const checks: Array<[string, () => boolean]> = [
    ['raw and JSON-escaped forms, one includes each (the guard before it knew encodings)', () => before.some((f) => answer.includes(f))],
    ['every form (the guard now, per answer sent)', () => matcher.test(answer)],
    ['every form, on an answer holding % and & (the escaped text forms searched, also percent-decoded)', () => matcher.test(escaped)],
    ['every form, on an answer holding \\n', () => matcher.test(broken)],
    ['every form, on a Buffer payload (latin1 view, then the search)', () => matcher.test(buffer)],
    ['every form, on an upstream answer without escapes (parseRpc)', () => answerCarriesSecret(matcher, answer, json)],
    ['the byte encodings alone, anchors shared (the guard now)', () => shared(answer)],
    ['the byte encodings alone, each form anchored on its own', () => eachOwn.some((f) => f(answer))],
    ['the byte encodings alone, one expression per form, skips between characters', () => perForm.some((r) => r.test(answer))],
    ['the byte encodings alone, the text normalised once, each needle searched', () => normalised(answer)],
    ['every form, the byte encodings as one expression per form', () => plain.test(answer) || perForm.some((r) => r.test(answer))],
    ['log scrubber, one access line, raw form (before)', () => ACCESS_LINE.includes(secret)],
    ['log scrubber, one access line, every form (now)', () => matcher.test(ACCESS_LINE)]
  ]
  for (const [name, check] of checks) rows.set(name, [...(rows.get(name) ?? []), nsPerCheck(check)])
}

console.log(`answer: ${answer.length} bytes; ${SECRETS} random secrets of 32 characters; ns per check, mean (min–max over the secrets)`)
for (const [name, ns] of rows) {
  const mean = ns.reduce((a, b) => a + b, 0) / ns.length
  console.log(`${mean.toFixed(0).padStart(6)} ns (${Math.min(...ns).toFixed(0)}–${Math.max(...ns).toFixed(0)})  ${name}`)
}
