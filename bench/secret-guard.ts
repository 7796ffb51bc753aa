// npm run bench -- --secret-guard (or npx tsx bench/secret-guard.ts): what the secret guard
// (docs/design.md#secret-echo) costs per answer, in ns per check on a typical 2 KiB answer that
// does not carry the secret (the common case: the whole text is scanned) — the raw and
// JSON-escaped forms alone (one `includes` each, the guard before it knew encodings); every form
// as the guard searches them now (src/core/secret-match.ts), also the search of an upstream answer in
// parseRpc; the same on an answer holding `%` and `&` (the escaped text forms searched too) and
// on one holding JSON-escaped line breaks (base64 searched with them); and the alternatives each
// choice was measured against: one alternation of all the forms (a single pass), the literals
// (base32, hex) by `includes` or as expressions instead of by their rarest character, base64's
// line breaks and the escaped text forms searched whatever the text holds. The log scrubber's
// search of one access line (~310 bytes), before and now. An Aho–Corasick automaton
// (modern-ahocorasick 3.3, pure JavaScript) took 60–110 µs per check on the same answer and is
// not a row here. For each of several random secrets, the median of 5 runs of 20,000 checks
// after a warm-up.
import { randomBytes } from 'node:crypto'
import { answerCarriesSecret, literalSearch, secretForms, secretMatcher, secretPatterns } from '../src/core/secret-match.js'

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
// the cost moves with the secret (how often its characters start a partial match): several random ones
const rows = new Map<string, number[]>()
for (let k = 0; k < SECRETS; k++) {
  const secret = randomBytes(24).toString('base64url')
  const before = [...new Set([secret, JSON.stringify(secret).slice(1, -1)])]
  const matcher = secretMatcher(secret)
  const alternation = new RegExp(secretPatterns(secret).join('|'))
  // the matcher's parts, to swap one choice at a time
  const forms = secretForms(secret)
  const plain = new RegExp(forms.plain)
  const text = new RegExp(forms.text)
  const base64 = forms.base64.map((s) => new RegExp(s))
  const unbroken = forms.base64Unbroken.map((s) => new RegExp(s))
  const literalExpressions = forms.literals.map((s) => new RegExp(s))
  const literals = forms.literals.map(literalSearch)
  // on this answer (no %, &, \u or line break) the guard runs plain, the unbroken base64 and the literals
  const rest = (): boolean => unbroken.some((r) => r.test(answer)) || literals.some((l) => l(answer))
  const json = JSON.parse(answer) as unknown
  const checks: Array<[string, () => boolean]> = [
    ['raw and JSON-escaped forms, one includes each (the guard before it knew encodings)', () => before.some((f) => answer.includes(f))],
    ['every form (the guard now, per answer sent)', () => matcher.test(answer)],
    ['every form, on an answer holding % and & (the escaped text forms searched too)', () => matcher.test(escaped)],
    ['every form, on an answer holding \\n (base64 searched with line breaks)', () => matcher.test(broken)],
    ['every form, one alternation of all the forms (one pass)', () => alternation.test(answer)],
    ['every form, the literals by includes', () => plain.test(answer) || unbroken.some((r) => r.test(answer)) || forms.literals.some((l) => answer.includes(l))],
    ['every form, the literals as expressions', () => plain.test(answer) || unbroken.some((r) => r.test(answer)) || literalExpressions.some((r) => r.test(answer))],
    ['every form, base64 with line breaks whatever the text holds', () => plain.test(answer) || base64.some((r) => r.test(answer)) || literals.some((l) => l(answer))],
    ['every form, the escaped text forms whatever the text holds', () => text.test(answer) || rest()],
    ['every form, on a Buffer payload (latin1 view, then the search)', () => matcher.test(buffer)],
    ['every form, on an upstream answer without escapes (parseRpc)', () => answerCarriesSecret(matcher, answer, json)],
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
