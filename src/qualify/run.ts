// The smoke itself: every check in a fixed order, each bounded by the assertion time bound
// (its signal aborts every request and poll in it, and a timer answers FAIL even if something
// ignored the signal). A check's own failure becomes FAIL with the tool's words, never an
// exception's text.
import type { QualifyConfig } from './config.js'
import type { Check, QualifyContext } from './context.js'
import { argusChecks } from './checks/argus.js'
import { authChecks } from './checks/auth.js'
import { discoveryChecks } from './checks/discovery.js'
import { identityChecks } from './checks/identity.js'
import { observerChecks } from './checks/observer.js'
import { routeChecks } from './checks/routes.js'
import { createProbe, type Probe } from './probe.js'
import { WIRE_V03 } from '../upstream/a2a-wire.js'
import { ProbeFailure, fail, type Result } from './types.js'

export const CHECKS: readonly Check[] = [...discoveryChecks, ...routeChecks, ...authChecks, ...argusChecks, ...identityChecks, ...observerChecks]

export interface RunOptions {
  observerTask?: string
  /** called after each assertion, so a long run prints as it goes */
  onResult?: (result: Result) => void
  /** tests may pass their own probe; by default one is created and closed here */
  probe?: Probe
}

export async function runQualification (config: QualifyConfig, opts: RunOptions = {}): Promise<Result[]> {
  const probe = opts.probe ?? createProbe(config)
  const ctx: QualifyContext = {
    config,
    probe,
    rpc: { probe, endpoint: `${config.prefix}/a2a/`, maxBytes: config.maxResponseBytes, maxTaskBytes: config.maxTaskResponseBytes, wire: WIRE_V03 },
    observerTask: opts.observerTask,
    facts: { cards: [], reads: new Map() },
    at: (path) => `${config.prefix}${path}`
  }
  const results: Result[] = []
  try {
    for (const check of CHECKS) {
      const result = await bounded(check, ctx, config.assertionTimeoutMs)
      results.push(result)
      opts.onResult?.(result)
    }
  } finally {
    if (opts.probe === undefined) await probe.close()
  }
  return results
}

async function bounded (check: Check, ctx: QualifyContext, ms: number): Promise<Result> {
  const controller = new AbortController()
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<Result>((resolve) => {
    timer = setTimeout(() => {
      controller.abort()
      resolve(fail(check.name, `no conclusion within ${ms} ms`))
    }, ms)
  })
  const ran = check.run(ctx, controller.signal).catch((err: unknown) =>
    fail(check.name, err instanceof ProbeFailure ? err.reason : 'the check failed unexpectedly'))
  try {
    return await Promise.race([ran, expired])
  } finally {
    clearTimeout(timer)
    controller.abort() // nothing of this assertion outlives it
  }
}
