// The scale bench's gateway and what talks to it (bench/scale.ts, bench/scale-retention.ts): the
// simulator and the gateway each in a process of their own (bench/simulator-child.ts,
// bench/scale-gateway-child.ts), compiled as bench/compare.ts runs its children, the gateway with
// every scope for one bench caller; a client of one connection per request in flight; and the
// figures' arithmetic.
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { Pool } from 'undici'
import { sha256Hex } from '../src/callers/tokens.js'
import { startChild, type Child } from './child-ipc.js'
import { BENCH_ID_PREFIX, ledgerRows } from './scale-fill.js'
import type { ChildAsk, ChildReport } from './scale-gateway-child.js'
import { prng, scaleCampaignId, type ScalePlan } from './scale-rows.js'

export interface Answer { status: number; text: string; ms: number }
export interface ScaleGateway {
  /** fork to listening, migrations included (there are none left: the ledger is migrated before) */
  startMs: number
  /** performance.now() when it listened */
  startedAt: number
  /** of the start, in the gateway's process: node and its modules loaded, then the gateway's own start */
  bootMs: number
  gatewayMs: number
  call: (method: 'GET' | 'POST', path: string, body?: unknown) => Promise<Answer>
  ask: (m: ChildAsk) => void
  next: <T extends ChildReport['type']>(type: T) => Promise<Extract<ChildReport, { type: T }>>
  close: () => Promise<void>
}

/** the simulator, then the gateway on `ledgerUrl`; `env` adds to (or overrides) the gateway's */
export async function startScaleGateway (ledgerUrl: string, env: Record<string, string> = {}, childEnv: Record<string, string> = {}): Promise<ScaleGateway> {
  const secret = randomBytes(24).toString('base64url')
  const token = randomBytes(18).toString('base64url')
  const sim = await startChild('simulator-child.ts', { BENCH_SIM_SECRET: secret })
  const gatewayEnv = {
    OPENOPERATOR_URL: sim.url,
    SPYNEL_AGENT_ZERO_API_KEY: secret,
    GATEWAY_CALLERS: JSON.stringify([{ name: 'bench', tokenSha256: sha256Hex(token), scopes: ['read', 'control', 'admin'], controllerId: 'bench-ctl' }]),
    GATEWAY_CONTROL_ENABLED: 'true',
    GATEWAY_LEDGER_URL: ledgerUrl,
    GATEWAY_RATE_LIMIT_CONTROL: '10000000',
    GATEWAY_RATE_LIMIT_READ: '10000000',
    // short owner waits, so reconcile may settle not_applied soon after the start (docs/design.md#one-clock)
    UPSTREAM_CONNECT_TIMEOUT_MS: '1000',
    UPSTREAM_MUTATION_TIMEOUT_MS: '2000',
    UPSTREAM_READ_TIMEOUT_MS: '2000',
    HOST: '127.0.0.1',
    PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: 'warn',
    ...env
  }
  const forked = performance.now()
  let gw: Child
  try {
    gw = await startChild('scale-gateway-child.ts', { BENCH_GATEWAY_ENV: JSON.stringify(gatewayEnv), ...childEnv }, { stdout: 'ignore' })
  } catch (err) {
    await sim.close()
    throw err
  }
  const startedAt = performance.now()
  const pool = new Pool(gw.url, { connections: 32, pipelining: 1 })
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const next = nextOf(gw)
  gw.proc.send({ type: 'timings' } satisfies ChildAsk)
  const { bootMs, gatewayMs } = await next('timings')
  return {
    startMs: startedAt - forked,
    startedAt,
    bootMs,
    gatewayMs,
    call: async (method, path, body) => {
      const t = performance.now()
      const res = await pool.request({ path, method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
      const text = await res.body.text()
      return { status: res.statusCode, text, ms: performance.now() - t }
    },
    ask: (m) => { gw.proc.send(m) },
    next,
    close: async () => {
      await pool.close()
      await gw.close()
      await sim.close()
    }
  }
}

/** the child's next report of a type */
function nextOf (gw: Child): ScaleGateway['next'] {
  return async (type) => await new Promise((resolve, reject) => {
    const on = (m: ChildReport): void => { if (m.type === type) { done(); resolve(m as never) } }
    const exited = (): void => { done(); reject(new Error(`the gateway exited before '${type}'`)) }
    const done = (): void => { gw.proc.off('message', on); gw.proc.off('exit', exited) }
    gw.proc.on('message', on)
    gw.proc.once('exit', exited)
  })
}

export const pct = (xs: number[], q: number): number | undefined => {
  if (xs.length === 0) return undefined
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]
}
export const ms = (v: number | undefined): string => v === undefined ? '-' : v < 10 ? v.toFixed(2) : v.toFixed(1)
/** "p50/p99" in ms */
export const p5099 = (xs: number[]): string => `${ms(pct(xs, 0.5))}/${ms(pct(xs, 0.99))}`
export const sleep = async (t: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, t)) }

/**
 * `n` campaigns of the plan a run may mutate: none of their records unresolved in the store now
 * (an earlier run on a kept ledger may have left one), from an offset of the run's own
 */
export async function freeCampaigns (url: string, plan: ScalePlan, seed: number, n = 64): Promise<number[]> {
  const picked: number[] = []
  const start = Math.floor(prng(seed)() * plan.campaigns)
  for (let k = 0; k < plan.campaigns && picked.length < n * 2; k++) {
    const c = (start + k) % plan.campaigns
    if (plan.lastOf[c] !== -1 && !plan.ambiguous.has(c) && !plan.pending.has(c)) picked.push(c)
  }
  const ids = picked.map(scaleCampaignId)
  const blocked = new Set((await ledgerRows<{ campaign_id: string }>(url, `SELECT DISTINCT campaign_id FROM mutation_records
    WHERE state IN ('pending', 'ambiguous') AND campaign_id IN (${ids.map((_, k) => `$${k + 1}`).join(', ')})`, ids)).map((r) => r.campaign_id))
  return picked.filter((c) => !blocked.has(scaleCampaignId(c))).slice(0, n)
}

/** each campaign claimed by the bench's controller, so its interventions are accepted */
export async function claimAll (gw: ScaleGateway, campaigns: number[], runId: string): Promise<void> {
  for (const c of campaigns) {
    const r = await gw.call('POST', `/v1/campaigns/${scaleCampaignId(c)}/control/claim`, { requestId: `${BENCH_ID_PREFIX}${runId}-claim-${c}`, ttlSeconds: 3600 })
    if (r.status !== 200) throw new Error(`claim answered ${r.status}: ${r.text.slice(0, 300)}`)
  }
}

/** one intervention, request id `${BENCH_ID_PREFIX}<run>-<tag>-<n>` */
export async function intervene (gw: ScaleGateway, campaign: number, runId: string, tag: string, n: number): Promise<Answer> {
  return await gw.call('POST', `/v1/campaigns/${scaleCampaignId(campaign)}/interventions`, {
    requestId: `${BENCH_ID_PREFIX}${runId}-${tag}-${n}`, intervention: { action: 'adjust', knob: 'lr_scale', value: 0.9, seq: n }
  })
}
