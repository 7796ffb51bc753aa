// How results are printed: one line per assertion (`PASS name`, `FAIL name: reason`,
// `SKIP name: reason`) or, with --json, the same results as one JSON document. As a last line
// of defence every printed string is scrubbed of the secret, though no reason is built from
// remote text or the configuration's secret in the first place.
import type { Result } from './types.js'

export function formatLine (r: Result): string {
  return r.reason === undefined ? `${r.status} ${r.name}` : `${r.status} ${r.name}: ${oneLine(r.reason)}`
}

export interface Counts { pass: number; fail: number; skip: number }

export function countResults (results: readonly Result[]): Counts {
  const counts = { pass: 0, fail: 0, skip: 0 }
  for (const r of results) counts[r.status === 'PASS' ? 'pass' : r.status === 'FAIL' ? 'fail' : 'skip'] += 1
  return counts
}

export function formatJson (results: readonly Result[], target: string, expectedSourceSha: string): string {
  const counts = countResults(results)
  return JSON.stringify({
    tool: 'openoperator-gateway qualify',
    target,
    expectedSourceSha,
    ok: counts.fail === 0,
    counts,
    results: results.map((r) => (r.reason === undefined ? { name: r.name, status: r.status } : { name: r.name, status: r.status, reason: oneLine(r.reason) }))
  }, null, 2)
}

export function scrub (text: string, secrets: readonly string[]): string {
  let out = text
  for (const s of secrets) if (s.length > 0) out = out.split(s).join('[REDACTED]')
  return out
}

const oneLine = (text: string): string => text.replace(/[\r\n]+/g, ' ')
