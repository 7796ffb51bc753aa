// NODE_TLS_REJECT_UNAUTHORIZED=0 does not switch off the upstream's certificate check
// (docs/design.md#production, docs/design.md#upstream-wire-rules). Node's TLS reads the variable
// when a connection is made, so the gateway runs as a child process with it set: an upstream whose
// certificate is signed by a CA the gateway does not trust (not in UPSTREAM_CA_FILE) is refused
// and never receives a request, hence never the secret; in production the start is refused.
import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { sha256Hex } from '../../src/callers/tokens.js'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { listenUrlOf, startGatewayChild } from '../helpers/child.js'
import { call } from '../helpers/http.js'
import { TRUSTED_CA_FILE, unknownServer } from '../helpers/tls.js'

const SECRET = `tls-env-secret-${randomBytes(8).toString('hex')}`
const token = `tok-${randomBytes(18).toString('base64url')}`
const callers = JSON.stringify([{ name: 'reader', tokenSha256: sha256Hex(token), scopes: ['read', 'admin'] }])

let sim: Simulator | undefined
afterEach(async () => { await sim?.close(); sim = undefined })

describe('NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment', () => {
  it('an upstream with an untrusted certificate is still refused: nothing sent, no secret', async () => {
    sim = await startSimulator({ secret: SECRET, tls: unknownServer, profile: 'a2a-js' })
    const p = startGatewayChild({
      NODE_TLS_REJECT_UNAUTHORIZED: '0',
      OPENOPERATOR_URL: sim.url,
      SPYNEL_AGENT_ZERO_API_KEY: SECRET,
      UPSTREAM_CA_FILE: TRUSTED_CA_FILE,
      GATEWAY_CALLERS: callers,
      GATEWAY_LEDGER_URL: 'sqlite::memory:',
      HOST: '127.0.0.1',
      PORT: '0',
      METRICS_PORT: '0',
      UPSTREAM_CONNECT_TIMEOUT_MS: '2000',
      // a busy machine must not shed the refresh (a 503 seen once in a full run beside a bench):
      // load shedding is proved elsewhere
      GATEWAY_MAX_EVENT_LOOP_DELAY_MS: '0'
    })
    const url = await listenUrlOf(p)
    // the discovery at start and a manual refresh both meet the handshake's refusal
    const refreshed = await call(`${url}/v1/upstream/refresh`, { method: 'POST', token })
    expect(refreshed.status, refreshed.text).toBe(200)
    expect(refreshed.body.card).toBeNull()
    expect(refreshed.body.lastError).toBe('unreachable')
    // without a card, a read is not even tried
    const read = await call(`${url}/v1/tasks/task-demo-1`, { token })
    expect(read.status, read.text).toBe(503)
    expect(sim.received).toHaveLength(0)
    // warned at start, without any secret
    expect(p.out()).toMatch(/NODE_TLS_REJECT_UNAUTHORIZED=0 is set: the upstream's certificate is verified regardless/)
    expect(p.out() + p.err()).not.toContain(SECRET)
    p.child.kill('SIGTERM')
    expect(await p.exited).toBe(0)
  })

  it('production refuses to start, naming the variable', async () => {
    const p = startGatewayChild({
      NODE_ENV: 'production',
      NODE_TLS_REJECT_UNAUTHORIZED: '0',
      OPENOPERATOR_URL: 'https://127.0.0.1:9',
      SPYNEL_AGENT_ZERO_API_KEY: SECRET,
      GATEWAY_CALLERS: callers,
      GATEWAY_LEDGER_URL: 'sqlite::memory:',
      HOST: '127.0.0.1',
      PORT: '0',
      METRICS_PORT: '0'
    })
    expect(await p.exited).toBe(1)
    expect(p.err()).toMatch(/NODE_TLS_REJECT_UNAUTHORIZED: must not be 0 when NODE_ENV=production/)
    expect(p.err() + p.out()).not.toContain(SECRET)
    expect(p.out()).toBe('')
  })
})
