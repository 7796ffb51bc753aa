// The OpenAPI document as a contract a client can use (docs/design.md#rest-interface,
// docs/design.md#errors): a valid OpenAPI 3.0 document with one name per component, an
// operationId on every route, real response descriptions and working examples; and honest
// about errors. Each route declares the codes it can answer (schemas/responses.ts) and the
// document lists them per status; here the gateway is driven over real sockets — refusals
// before any work, every route's own refusals, the remote's faults, a broken ledger — and every
// code it answers must be listed for that route and status. The source of the codes is the
// gateway's answers, never the declaration. Statically, every code of the error table is
// listed on some route, always under its own status.
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { Validator } from '@seriousme/openapi-schema-validator'
import { ERROR_TABLE, type ErrorCode } from '../../src/core/errors.js'
import { AcknowledgeBodySchema, MUTATION_BODY_SCHEMAS } from '../../schemas/control.js'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { openapiDocument } from '../../scripts/generate-client.js'
import { startGateway, type TestGateway } from '../helpers/gateway.js'
import { claim, rid, type ControlPair } from '../helpers/control.js'
import { it } from '../helpers/fixtures.js'
import { call, type JsonResponse } from '../helpers/http.js'
import { rawExchange } from '../helpers/raw-http.js'
import { generateKeyPair, exportJWK } from 'jose'
import { A2aAgentCardSchema, A2aJwksSchema, A2aRequestSchema, A2aResponseSchema } from '../../schemas/front.js'

type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any -- the document is walked freely
interface Operation { method: string; path: string; op: Json }

/** every operation the gateway documents, with its scope: this test's own list, not the routes' */
const OPERATIONS: Record<string, { route: string; scope: 'read' | 'control' | 'admin' }> = {
  getUpstream: { route: 'GET /v1/upstream', scope: 'read' },
  refreshUpstream: { route: 'POST /v1/upstream/refresh', scope: 'admin' },
  getSupervisorHealth: { route: 'GET /v1/supervisor/health', scope: 'read' },
  getSupervisorStatus: { route: 'GET /v1/supervisor/status', scope: 'read' },
  listCampaigns: { route: 'GET /v1/campaigns', scope: 'read' },
  getTask: { route: 'GET /v1/tasks/{taskId}', scope: 'read' },
  getControl: { route: 'GET /v1/campaigns/{campaignId}/control', scope: 'read' },
  claimControl: { route: 'POST /v1/campaigns/{campaignId}/control/claim', scope: 'control' },
  fenceControl: { route: 'POST /v1/campaigns/{campaignId}/control/fence', scope: 'admin' },
  renewControl: { route: 'POST /v1/campaigns/{campaignId}/control/renew', scope: 'control' },
  releaseControl: { route: 'POST /v1/campaigns/{campaignId}/control/release', scope: 'control' },
  submitWork: { route: 'POST /v1/campaigns/{campaignId}/submissions', scope: 'control' },
  intervene: { route: 'POST /v1/campaigns/{campaignId}/interventions', scope: 'control' },
  cancelTask: { route: 'POST /v1/campaigns/{campaignId}/cancel', scope: 'control' },
  listCampaignRequests: { route: 'GET /v1/campaigns/{campaignId}/requests', scope: 'read' },
  getRequest: { route: 'GET /v1/campaigns/{campaignId}/requests/{requestId}', scope: 'read' },
  listUnresolvedRequests: { route: 'GET /v1/requests', scope: 'admin' },
  reconcileRequest: { route: 'POST /v1/campaigns/{campaignId}/requests/{requestId}/reconcile', scope: 'control' },
  acknowledgeRequest: { route: 'POST /v1/campaigns/{campaignId}/requests/{requestId}/acknowledge', scope: 'admin' },
  backupLedger: { route: 'GET /v1/admin/ledger/backup', scope: 'admin' },
  listControllerBindings: { route: 'GET /v1/admin/controllers', scope: 'admin' },
  removeControllerBinding: { route: 'DELETE /v1/admin/controllers/{controllerId}', scope: 'admin' },
  listCallers: { route: 'GET /v1/admin/callers', scope: 'admin' }
}

/** the A2A front door's operations (docs/api.md#a2a-front-door): JSON-RPC in one POST, and the card's public routes */
const A2A_OPERATIONS: Record<string, { route: string; scope: 'read' | 'none' }> = {
  callAgent: { route: 'POST /a2a/', scope: 'read' },
  getAgentCard: { route: 'GET /a2a/.well-known/agent-card.json', scope: 'none' },
  getAgentCardAtOldPath: { route: 'GET /a2a/.well-known/agent.json', scope: 'none' },
  getAgentCardKeys: { route: 'GET /a2a/.well-known/jwks.json', scope: 'none' }
}
const ALL_OPERATIONS = { ...OPERATIONS, ...A2A_OPERATIONS }

let doc: Json
beforeAll(async () => { doc = await openapiDocument() })

function operations (): Operation[] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, op]) => ({ method: method.toUpperCase(), path, op: op as Json })))
}
const byId = (id: string): Operation => {
  const found = operations().find((o) => o.op.operationId === id)
  if (found === undefined) throw new Error(`no operation ${id}`)
  return found
}
const resolve = (r: Json): Json => typeof r.$ref === 'string' ? doc.components.responses[r.$ref.replace('#/components/responses/', '')] : r
/** the codes an operation documents for an error status; undefined when the status is not documented */
function documentedCodes (op: Json, status: number): string[] | undefined {
  const r = op.responses[String(status)]
  if (r === undefined) return undefined
  const error = resolve(r).content?.['application/json']?.schema?.properties?.error
  return error?.allOf?.[1]?.properties?.code?.enum ?? []
}

// ---- the record of what the gateway answered --------------------------------------------

const seen = new Map<string, Set<string>>()

function observed (operationId: string, status: number, code: string | undefined): void {
  const key = `${operationId} ${status}`
  const codes = seen.get(key) ?? new Set<string>()
  codes.add(code ?? '-')
  seen.set(key, codes)
  const { op } = byId(operationId)
  const listed = documentedCodes(op, status)
  expect(listed, `${operationId} answered ${status}${code === undefined ? '' : ` ${code}`}, a status its document does not list`).toBeDefined()
  if (status >= 400) {
    expect(code, `${operationId} answered ${status} without an error code`).toBeDefined()
    expect(listed, `${operationId} answered ${status} ${code}, a code its document does not list for ${status}`).toContain(code)
  }
}

interface Hit { path?: Record<string, string>; query?: string; token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> }

function urlOf (base: string, operationId: string, o: Hit): string {
  const { path } = byId(operationId)
  return `${base}${path.replace(/\{(\w+)\}/g, (_m, k: string) => encodeURIComponent(o.path?.[k] ?? `${k}-00000001`))}${o.query ?? ''}`
}

/** one call of an operation by its operationId, recorded and checked against the document */
async function hit (base: string, operationId: string, o: Hit = {}): Promise<JsonResponse> {
  const { method } = byId(operationId)
  const res = await call(urlOf(base, operationId, o), { method: method as 'GET' | 'POST' | 'DELETE', token: o.token, body: o.body, rawBody: o.rawBody, headers: { ...(o.rawBody !== undefined && { 'content-type': 'application/json' }), ...o.headers } })
  observed(operationId, res.status, res.body?.error?.code)
  return res
}

/** the same over a raw socket, for what undici will not send (an Expect, two Authorization headers, huge headers) */
async function hitRaw (base: string, operationId: string, headerLines: string, o: Hit = {}): Promise<void> {
  const { method } = byId(operationId)
  const target = urlOf('', operationId, o)
  const body = method === 'POST' ? '{}' : ''
  const auth = o.token !== undefined ? `Authorization: Bearer ${o.token}\r\n` : ''
  const bodyHeaders = method === 'POST' ? `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n` : ''
  const res = await rawExchange(base, `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}${headerLines}${bodyHeaders}Connection: close\r\n\r\n${body}`)
  observed(operationId, res.status, res.body?.error?.code)
}

const wrongScopeToken = (gw: TestGateway, scope: 'read' | 'control' | 'admin'): string =>
  scope === 'read' ? gw.tokens.none : scope === 'control' ? gw.tokens.admin : gw.tokens.controller

/** a valid body for each operation that takes one, from the document's own examples */
const example = (operationId: string): unknown => {
  const ref = byId(operationId).op.requestBody?.content?.['application/json']?.schema?.$ref as string | undefined
  return ref === undefined ? {} : doc.components.schemas[ref.replace('#/components/schemas/', '')].example
}

afterAll(() => {
  if (doc === undefined || seen.size === 0) return
  let declared = 0
  let met = 0
  for (const { op } of operations()) {
    for (const status of Object.keys(op.responses).map(Number).filter((s) => s >= 400)) {
      for (const code of documentedCodes(op, status) ?? []) {
        declared++
        if (seen.get(`${op.operationId} ${status}`)?.has(code) === true) met++
      }
    }
  }
  console.log(`openapi: the gateway answered ${met} of the ${declared} (operation, error code) pairs its document lists; every answer it gave is listed`)
})

// ---- the document itself --------------------------------------------------------------------

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.0 document, the one /openapi.json serves', async () => {
    const validator = new Validator()
    const result = await validator.validate(structuredClone(doc))
    expect(validator.version).toBe('3.0')
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    const sim = await startSimulator()
    try {
      const gw = await startGateway({ simulator: sim })
      expect((await call(`${gw.url}/openapi.json`)).body).toEqual(doc)
    } finally {
      await sim.close()
    }
  })

  it('gives every operation one stable camelCase operationId', () => {
    const ids = operations().map((o) => o.op.operationId as string)
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z]*$/)
    expect(Object.fromEntries(operations().map((o) => [o.op.operationId, `${o.method} ${o.path}`]))).toEqual(
      Object.fromEntries(Object.entries(ALL_OPERATIONS).map(([id, o]) => [id, o.route])))
  })

  it('names each schema once: no *Input twin, nothing unused', () => {
    const names = Object.keys(doc.components.schemas)
    expect(names.filter((n) => /Input$/.test(n))).toEqual([])
    expect(names).toEqual(expect.arrayContaining(['ClaimBody', 'SubmitBody', 'Lease', 'Control', 'Request', 'ErrorDetail', 'TaskProjection', 'Upstream']))
    const text = JSON.stringify({ paths: doc.paths, responses: doc.components.responses, schemas: doc.components.schemas })
    for (const n of names) expect(text, n).toContain(`"#/components/schemas/${n}"`)
    // a request body names its component, as a generator will
    expect(byId('claimControl').op.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ClaimBody' })
  })

  it('says what every answer means and which scope each operation needs', () => {
    for (const { op } of operations()) {
      expect(op.summary, op.operationId).toBeTruthy()
      const scope = ALL_OPERATIONS[op.operationId]!.scope
      expect(op.description, op.operationId).toMatch(scope === 'none' ? /^Needs no token\./ : new RegExp(`^Needs the \`${scope}\` scope\\.`))
      // a public route says so to a generator too
      if (scope === 'none') expect(op.security, op.operationId).toEqual([])
      for (const [status, r] of Object.entries(op.responses as Json)) {
        const d = resolve(r).description as string
        expect(d, `${op.operationId} ${status}`).toBeTruthy()
        expect(d, `${op.operationId} ${status}`).not.toBe('Default Response')
      }
    }
  })

  it('lists under each error status only codes of that status, and every code of the error table on some route', () => {
    const listed = new Set<string>()
    for (const { op } of operations()) {
      for (const status of Object.keys(op.responses).map(Number).filter((s) => s >= 400)) {
        const codes = documentedCodes(op, status)!
        expect(codes.length, `${op.operationId} ${status}`).toBeGreaterThan(0)
        for (const c of codes) {
          expect(ERROR_TABLE[c as ErrorCode]?.status, `${op.operationId} lists ${c} under ${status}`).toBe(status)
          expect(resolve(op.responses[String(status)]).description, `${op.operationId} ${status} describes ${c}`).toContain(`\`${c}\``)
          listed.add(c)
        }
      }
      // an answer the caller may retry after a wait says so
      for (const s of ['429', '503']) if (op.responses[s] !== undefined) expect(resolve(op.responses[s]).headers?.['Retry-After'], `${op.operationId} ${s}`).toBeDefined()
    }
    expect([...listed].sort()).toEqual(Object.keys(ERROR_TABLE).sort())
  })

  it('shows realistic examples that the gateway accepts, and expiresAt in Unix seconds', () => {
    const lease = doc.components.schemas.Lease
    expect(lease.properties.expiresAt.description).toMatch(/Unix seconds/)
    expect(lease.example).toEqual({ controllerId: 'ctl-research-1', epoch: 3, expiresAt: 1796169600 })
    expect(doc.components.schemas.ClaimBody.example).toEqual({ requestId: 'claim-2026-12-01-a1', ttlSeconds: 600 })
    const bodies: Record<string, { safeParse: (v: unknown) => { success: boolean } }> = {
      ClaimBody: MUTATION_BODY_SCHEMAS.claim,
      RenewBody: MUTATION_BODY_SCHEMAS.renew,
      ReleaseBody: MUTATION_BODY_SCHEMAS.release,
      SubmitBody: MUTATION_BODY_SCHEMAS.submit,
      InterventionBody: MUTATION_BODY_SCHEMAS.intervene,
      CancelBody: MUTATION_BODY_SCHEMAS.cancel,
      AcknowledgeBody: AcknowledgeBodySchema
    }
    for (const [name, schema] of Object.entries(bodies)) {
      const ex = doc.components.schemas[name].example
      expect(ex, name).toBeDefined()
      expect(schema.safeParse(ex).success, name).toBe(true)
    }
    // the answers' examples are documented too
    for (const name of ['Control', 'Request', 'ErrorDetail', 'TaskProjection', 'Upstream', 'ArgusRead']) expect(doc.components.schemas[name].example, name).toBeDefined()
  })

  it('documents a body reconcile and refresh do without as optional', () => {
    expect(byId('reconcileRequest').op.requestBody.required).toBe(false)
    expect(byId('refreshUpstream').op.requestBody.required).toBe(false)
    expect(byId('claimControl').op.requestBody.required).toBe(true)
  })
})

// ---- the gateway's answers, over real sockets -------------------------------------------------

describe('every error code a route answers is listed for that route and status', () => {
  let sim: Simulator | undefined
  afterAll(async () => { await sim?.close() })

  it('refusals before the route\'s work, on every route: token, scope, query, body, path, Expect, headers', async () => {
    sim = await startSimulator()
    const gw = await startGateway({ simulator: sim, env: { GATEWAY_RATE_LIMIT_READ: '100000', GATEWAY_RATE_LIMIT_CONTROL: '100000', GATEWAY_RATE_LIMIT_AUTH_FAILURES: '100000' } })
    const t = gw.tokens.all
    for (const [id, { scope }] of Object.entries(OPERATIONS)) {
      const { method, path } = byId(id)
      expect((await hit(gw.url, id)).status, id).toBe(401)
      expect((await hit(gw.url, id, { token: 'tok-not-a-caller-000000000000' })).status, id).toBe(401)
      expect((await hit(gw.url, id, { token: wrongScopeToken(gw, scope), body: method === 'POST' ? example(id) : undefined })).status, id).toBe(403)
      if (method === 'GET') await hit(gw.url, id, { token: t, query: '?unknownParameter=1' })
      if (method === 'POST') {
        expect((await hit(gw.url, id, { token: t, rawBody: '{"not json' })).status, id).toBe(400)
        expect((await hit(gw.url, id, { token: t, body: { requestId: rid(), filler: 'x'.repeat(70 * 1024) } })).status, id).toBe(413)
      }
      if (path.includes('{')) {
        const long = Object.fromEntries([...path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1]!, 'a'.repeat(300)]))
        expect((await hit(gw.url, id, { token: t, path: long })).status, id).toBe(414)
        const malformed = Object.fromEntries([...path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1]!, 'no spaces allowed']))
        await hit(gw.url, id, { token: t, path: malformed, body: method === 'POST' ? example(id) : undefined })
      }
      await hitRaw(gw.url, id, 'Expect: tea-please\r\n', { token: t })
      await hitRaw(gw.url, id, `Authorization: Bearer ${t}\r\n`, { token: t })
      await hitRaw(gw.url, id, `X-Padding: ${'p'.repeat(20 * 1024)}\r\n`, { token: t })
    }
  })

  it('observer mode, the remote\'s faults and the reads\' own refusals', async () => {
    sim ??= await startSimulator()
    const gw = await startGateway({ simulator: sim, env: { UPSTREAM_READ_TIMEOUT_MS: '700', GATEWAY_RATE_LIMIT_READ: '100000', GATEWAY_RATE_LIMIT_CONTROL: '100000' } })
    const t = gw.tokens.all
    const campaignId = 'camp-2026-q4'
    // every route once, as a caller with every scope would call it against a remote without campaign control
    for (const id of Object.keys(OPERATIONS)) {
      const { method } = byId(id)
      await hit(gw.url, id, { token: t, path: { campaignId, requestId: 'iv-2026-12-01-a6', taskId: 'task-demo-1' }, body: method === 'POST' ? example(id) : undefined })
    }
    expect((await hit(gw.url, 'claimControl', { token: t, path: { campaignId }, body: example('claimControl') })).body.error.code).toBe('capability_unavailable')
    expect((await hit(gw.url, 'getControl', { token: t, path: { campaignId } })).body.error.code).toBe('capability_unavailable')
    // the body rules come before the capability
    for (const body of [
      { requestId: rid(), ttlSeconds: 60, constraints: { allow_merge: true } },
      { requestId: rid(), ttlSeconds: 60, controller_id: 'me' },
      { requestId: rid('a'), request_id: rid('b'), ttlSeconds: 60 },
      { ttlSeconds: 60 },
      { requestId: rid(), ttlSeconds: 5 }
    ]) expect((await hit(gw.url, 'claimControl', { token: t, path: { campaignId }, body })).status).toBe(400)
    expect((await hit(gw.url, 'refreshUpstream', { token: t, body: { force: true } })).status).toBe(400)
    expect((await hit(gw.url, 'listUnresolvedRequests', { token: t, query: '?cursor=not-one-we-gave' })).status).toBe(400)
    expect((await hit(gw.url, 'listCampaignRequests', { token: t, path: { campaignId }, query: '?limit=0' })).status).toBe(400)
    expect((await hit(gw.url, 'getTask', { token: t, path: { taskId: 'no-such-task-77' } })).status).toBe(404)
    expect((await hit(gw.url, 'acknowledgeRequest', { token: t, path: { campaignId, requestId: 'iv-2026-12-01-a6' }, body: { resolution: 'maybe', note: '' } })).status).toBe(400)

    // the remote's own codes, wherever it puts them, and its faults
    for (const code of ['invalid_argus_envelope', 'argus_supervisor_disabled', 'unsupported_argus_operation', 'argus_supervisor_unavailable'] as const) {
      sim.inject({ argusOperation: 'supervisor.health' }, { kind: 'argus-error', code, placement: 'rpc-data' }, 1)
      expect((await hit(gw.url, 'getSupervisorHealth', { token: t })).body.error.code).toBe(code)
    }
    sim.inject({ argusOperation: 'supervisor.status' }, { kind: 'task-states', states: ['input-required'] }, 1)
    expect((await hit(gw.url, 'getSupervisorStatus', { token: t })).body.error.code).toBe('upstream_unexpected_state')
    sim.inject({ argusOperation: 'campaign.list' }, { kind: 'rpc-error', code: -32603, message: 'Internal error' }, 1)
    expect((await hit(gw.url, 'listCampaigns', { token: t })).body.error.code).toBe('upstream_rejected')
    sim.inject({ argusOperation: 'campaign.list' }, { kind: 'status', status: 500, body: 'Internal Server Error', contentType: 'text/plain' }, 1)
    expect((await hit(gw.url, 'listCampaigns', { token: t })).body.error.code).toBe('upstream_unavailable')
    sim.inject({ argusOperation: 'campaign.list' }, { kind: 'invalid-json' }, 1)
    expect((await hit(gw.url, 'listCampaigns', { token: t })).body.error.code).toBe('upstream_invalid_response')
    sim.inject({ argusOperation: 'supervisor.health' }, { kind: 'delay', ms: 1500 }, 1)
    expect((await hit(gw.url, 'getSupervisorHealth', { token: t })).body.error.code).toBe('upstream_timeout')
    sim.inject({ rpcMethod: 'tasks/get' }, { kind: 'rpc-error', code: -32603, message: 'Internal error' }, 1)
    expect((await hit(gw.url, 'getTask', { token: t, path: { taskId: 'task-demo-1' } })).body.error.code).toBe('upstream_rejected')
    sim.inject({ rpcMethod: 'tasks/get' }, { kind: 'wrong-id' }, 1)
    expect((await hit(gw.url, 'getTask', { token: t, path: { taskId: 'task-demo-1' } })).body.error.code).toBe('upstream_invalid_response')
    sim.inject({ rpcMethod: 'tasks/get' }, { kind: 'delay', ms: 1500 }, 1)
    expect((await hit(gw.url, 'getTask', { token: t, path: { taskId: 'task-demo-1' } })).body.error.code).toBe('upstream_timeout')
    await sim.close()
    expect((await hit(gw.url, 'getTask', { token: t, path: { taskId: 'task-demo-1' } })).body.error.code).toBe('upstream_unavailable')
    expect((await hit(gw.url, 'getSupervisorHealth', { token: t })).body.error.code).toBe('upstream_unavailable')
    sim = undefined
  })

  it('a caller over its budget', async () => {
    const s = await startSimulator()
    try {
      const gw = await startGateway({ simulator: s, env: { GATEWAY_RATE_LIMIT_READ: '2', GATEWAY_RATE_LIMIT_CONTROL: '1' } })
      for (const id of ['getUpstream', 'getUpstream', 'getUpstream', 'getTask', 'listUnresolvedRequests']) await hit(gw.url, id, { token: gw.tokens.all, path: { taskId: 'task-demo-1' } })
      expect((await hit(gw.url, 'getUpstream', { token: gw.tokens.all })).body.error.code).toBe('rate_limited')
      for (let i = 0; i < 2; i++) await hit(gw.url, 'claimControl', { token: gw.tokens.all, path: { campaignId: 'camp-rl' }, body: { requestId: rid(), ttlSeconds: 60 } })
      expect((await hit(gw.url, 'intervene', { token: gw.tokens.all, path: { campaignId: 'camp-rl' }, body: { requestId: rid(), intervention: {} } })).body.error.code).toBe('rate_limited')
    } finally {
      await s.close()
    }
  })

  it('campaign control: the examples, leases, request ids, cancel, ambiguity, reconcile and acknowledge', async ({ startControlPair }) => {
    const p = await startControlPair()
    const base = p.gw.url
    const t = p.gw.tokens.controller
    const campaignId = 'camp-2026-q4'
    const at = (requestId?: string): Hit['path'] => ({ campaignId, ...(requestId !== undefined && { requestId }) })

    // the document's own examples, in order, are one working evening
    expect((await hit(base, 'claimControl', { token: t, path: at(), body: example('claimControl') })).status).toBe(200)
    expect((await hit(base, 'getControl', { token: t, path: at() })).status).toBe(200)
    expect((await hit(base, 'renewControl', { token: t, path: at(), body: example('renewControl') })).status).toBe(200)
    expect((await hit(base, 'cancelTask', { token: t, path: at(), body: { requestId: rid('cancel') } })).body.error.code).toBe('no_bound_task')
    const submitted = await hit(base, 'submitWork', { token: t, path: at(), body: example('submitWork') })
    expect(submitted.status).toBe(202)
    expect((await hit(base, 'getTask', { token: t, path: { taskId: submitted.body.taskId } })).status).toBe(200)
    expect((await hit(base, 'submitWork', { token: t, path: at(), body: example('submitWork') })).headers['idempotent-replayed']).toBe('true')
    expect((await hit(base, 'cancelTask', { token: t, path: at(), body: example('cancelTask') })).status).toBe(200)
    expect((await hit(base, 'cancelTask', { token: t, path: at(), body: { requestId: rid('cancel') } })).body.error.code).toBe('task_not_cancelable')
    expect((await hit(base, 'intervene', { token: t, path: at(), body: example('intervene') })).status).toBe(200)
    expect((await hit(base, 'getRequest', { token: t, path: at('iv-2026-12-01-a6') })).status).toBe(200)
    expect((await hit(base, 'listCampaignRequests', { token: p.gw.tokens.reader, path: at() })).status).toBe(200)
    // the controller id the evening bound, and its removal: held by the evening's live lease unless forced
    expect((await hit(base, 'listControllerBindings', { token: p.gw.tokens.admin })).body.controllers).toMatchObject([{ controllerId: 'ctl-1' }])
    expect((await hit(base, 'removeControllerBinding', { token: p.gw.tokens.admin, path: { controllerId: 'ctl-1' } })).body.error.code).toBe('controller_lease_held')
    expect((await hit(base, 'removeControllerBinding', { token: p.gw.tokens.admin, path: { controllerId: 'ctl-1' }, query: '?force=true' })).status).toBe(200)

    // request ids: another caller's, other params, the header against the body
    expect((await hit(base, 'intervene', { token: p.gw.tokens.all, path: at(), body: example('intervene') })).body.error.code).toBe('idempotency_key_conflict')
    expect((await hit(base, 'intervene', { token: t, path: at(), body: { requestId: 'iv-2026-12-01-a6', intervention: { action: 'go' } } })).body.error.code).toBe('idempotency_key_mismatch')
    expect((await hit(base, 'intervene', { token: t, path: at(), body: { requestId: rid(), intervention: {} }, headers: { 'idempotency-key': rid() } })).body.error.code).toBe('conflicting_fields')

    // leases: the remote's epoch moved on unseen, a rival, a lease about to end, none at all
    const lease = p.sim.control.lease(campaignId)!
    p.sim.control.setLease(campaignId, { ...lease, epoch: lease.epoch + 2 })
    expect((await hit(base, 'intervene', { token: t, path: at(), body: { requestId: rid(), intervention: {} } })).body.error.code).toBe('stale_epoch')
    expect((await hit(base, 'intervene', { token: t, path: at(), body: { requestId: rid(), intervention: {} } })).status).toBe(200)
    expect((await hit(base, 'claimControl', { token: p.gw.tokens.all, path: at(), body: { requestId: rid(), ttlSeconds: 60 } })).body.error.code).toBe('lease_held_by_other')
    // a lease about to end at the remote (moving this replica's clock alone would be a skew: docs/design.md#one-clock)
    const live = p.sim.control.lease(campaignId)!
    p.sim.control.setLease(campaignId, { ...live, expires_at: Math.floor(p.sim.control.now() / 1000) + 3 })
    expect((await hit(base, 'intervene', { token: t, path: at(), body: { requestId: rid(), intervention: {} } })).body.error.code).toBe('lease_expired')
    p.sim.control.setLease(campaignId, live)
    // the gateway's view of it is read again
    expect((await hit(base, 'getControl', { token: t, path: at() })).status).toBe(200)
    p.sim.inject({ rpcMethod: 'campaign/read_control' }, { kind: 'rpc-error', code: -32603, message: 'x' }, 1)
    expect((await hit(base, 'renewControl', { token: t, path: at(), body: { requestId: rid(), ttlSeconds: 600 } })).body.error.code).toBe('lease_readback_mismatch')
    p.sim.inject({ rpcMethod: 'campaign/read_control' }, { kind: 'rpc-error', code: -32603, message: 'x' }, 1)
    expect((await hit(base, 'getControl', { token: t, path: at() })).body.error.code).toBe('upstream_rejected')
    expect((await hit(base, 'releaseControl', { token: t, path: at(), body: example('releaseControl') })).status).toBe(200)
    expect((await hit(base, 'intervene', { token: t, path: at(), body: { requestId: rid(), intervention: {} } })).body.error.code).toBe('lease_not_held')
    expect((await hit(base, 'releaseControl', { token: t, path: at(), body: { requestId: rid() } })).body.error.code).toBe('lease_not_held')

    // a request still in flight: held at the remote's front end
    await claim(p, t, campaignId)
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'hold' }, 1)
    const heldId = rid('held')
    const sending = p.post(t, `/v1/campaigns/${campaignId}/interventions`, { requestId: heldId, intervention: { a: 1 } })
    for (let i = 0; i < 100 && p.sim.held().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    expect((await hit(base, 'intervene', { token: t, path: at(), body: { requestId: heldId, intervention: { a: 1 } } })).body.error.code).toBe('request_in_flight')
    expect((await hit(base, 'reconcileRequest', { token: t, path: at(heldId) })).body.error.code).toBe('request_in_flight')
    expect((await hit(base, 'acknowledgeRequest', { token: p.gw.tokens.admin, path: at(heldId), body: example('acknowledgeRequest') })).body.error.code).toBe('request_in_flight')
    expect((await hit(base, 'listUnresolvedRequests', { token: p.gw.tokens.admin, query: '?state=pending' })).body.requests).toHaveLength(1)
    p.sim.dropHeld()
    const lost = await sending
    observed('intervene', lost.status, lost.body?.error?.code)
    expect(lost.body.error.code).toBe('ambiguous_write')

    // the campaign is blocked; the remote applied nothing, so reconcile must wait for the deadline
    expect((await hit(base, 'intervene', { token: t, path: at(), body: { requestId: rid(), intervention: {} } })).body.error.code).toBe('ambiguity_unresolved')
    expect((await hit(base, 'intervene', { token: t, path: at(), body: { requestId: heldId, intervention: { a: 1 } } })).headers['idempotent-replayed']).toBe('true')
    const early = await hit(base, 'reconcileRequest', { token: t, path: at(heldId) })
    expect(early.body.error.code).toBe('reconcile_too_early')
    expect(Number(early.headers['retry-after'])).toBeGreaterThan(0)
    expect((await hit(base, 'acknowledgeRequest', { token: p.gw.tokens.admin, path: at(heldId), body: example('acknowledgeRequest') })).body.error.code).toBe('acknowledge_unsafe')
    p.sim.inject({ rpcMethod: 'campaign/request_status' }, { kind: 'rpc-error', code: -32603, message: 'x' }, 1)
    expect((await hit(base, 'reconcileRequest', { token: t, path: at(heldId) })).body.error.code).toBe('upstream_rejected')
    p.sim.inject({ rpcMethod: 'campaign/request_status' }, { kind: 'result', result: { request_id: 'someone-else-1', state: 'applied' } }, 1)
    expect((await hit(base, 'reconcileRequest', { token: t, path: at(heldId) })).body.error.code).toBe('upstream_invalid_response')
    // after failed reconciles, an admin may decide; the claim's epoch is not above the record's, so not "not applied"
    expect((await hit(base, 'acknowledgeRequest', { token: p.gw.tokens.admin, path: at(heldId), body: example('acknowledgeRequest') })).body.error.code).toBe('acknowledge_unsafe')
    expect((await hit(base, 'acknowledgeRequest', { token: p.gw.tokens.admin, path: at(heldId), body: { resolution: 'assume_applied', note: 'checked the remote\'s own log' } })).status).toBe(200)
    expect((await hit(base, 'reconcileRequest', { token: t, path: at(heldId) })).status).toBe(200)
    expect((await hit(base, 'acknowledgeRequest', { token: p.gw.tokens.admin, path: at(heldId), body: example('acknowledgeRequest') })).body.error.code).toBe('acknowledge_unsafe')
    expect((await hit(base, 'getRequest', { token: t, path: at('req-not-there-1') })).body.error.code).toBe('not_found')
    await hit(base, 'backupLedger', { token: p.gw.tokens.admin })
  })

  it('each mutation\'s Try it out, as Swagger UI fills it from the examples (header and body), is accepted', async ({ startControlPair }) => {
    const p = await startControlPair()
    const mutations = operations().filter(({ op }) => (op.parameters as Json[] | undefined)?.some((q) => q.in === 'header' && q.name === 'idempotency-key'))
    expect(mutations.map(({ op }) => op.operationId).sort()).toEqual(['cancelTask', 'claimControl', 'fenceControl', 'intervene', 'releaseControl', 'renewControl', 'submitWork'])
    /** the request Try it out builds: every parameter and the body from their examples */
    const tryItOut = (operationId: string): Hit => {
      const { op } = byId(operationId)
      const params = op.parameters as Json[]
      const exampleOf = (where: string): Record<string, string> => Object.fromEntries(params.filter((q) => q.in === where).map((q) => [q.name, q.schema.example ?? q.example]))
      const body = example(operationId) as { requestId?: string }
      const headers = exampleOf('header')
      // the document's own promise: the two ids a Try it out sends are one
      expect(headers['idempotency-key'], `${operationId}: Idempotency-Key example`).toBe(body.requestId)
      expect(body.requestId, operationId).toMatch(/^[A-Za-z0-9._:-]{8,128}$/)
      return { path: exampleOf('path'), body, headers }
    }
    const send = async (operationId: string, token: string): Promise<JsonResponse> => {
      const res = await hit(p.gw.url, operationId, { token, ...tryItOut(operationId) })
      expect(res.body?.error?.code, `${operationId}: ${JSON.stringify(res.body)}`).not.toBe('conflicting_fields')
      expect(res.status, `${operationId}: ${JSON.stringify(res.body)}`).toBeLessThan(300)
      return res
    }
    // one evening, in the examples' order, with the ids from the header and the body together
    const campaignId = String(tryItOut('claimControl').path!.campaignId)
    for (const id of ['claimControl', 'renewControl', 'submitWork', 'intervene', 'cancelTask', 'releaseControl']) await send(id, p.gw.tokens.controller)
    // the fence needs a campaign blocked by an ambiguous record and a lease that lapsed (docs/runbooks/ambiguous-write.md)
    await claim(p, p.gw.tokens.controller, campaignId)
    p.sim.inject({ rpcMethod: 'campaign/intervene' }, { kind: 'drop' }, 1)
    expect((await p.post(p.gw.tokens.controller, `/v1/campaigns/${campaignId}/interventions`, { requestId: rid('iv'), intervention: {} })).body.error.code).toBe('ambiguous_write')
    p.sim.control.setLease(campaignId, { ...p.sim.control.lease(campaignId)!, expires_at: Math.floor(p.sim.control.now() / 1000) - 1 })
    expect((await send('fenceControl', p.gw.tokens.all)).body.lease.controllerId).toBe('ctl-all')
  })

  it('a ledger that fails', async ({ startControlPair }) => {
    const p: ControlPair = await startControlPair()
    const t = p.gw.tokens.all
    await claim(p, t, 'camp-l')
    await p.gw.app.ledger.close()
    const path = { campaignId: 'camp-l', requestId: 'iv-2026-12-01-a6' }
    for (const id of Object.keys(OPERATIONS)) {
      const { method } = byId(id)
      await hit(p.gw.url, id, { token: t, path, body: method === 'POST' ? example(id) : undefined })
    }
    for (const id of ['getControl', 'intervene', 'listCampaignRequests', 'getRequest', 'listUnresolvedRequests', 'reconcileRequest', 'acknowledgeRequest']) {
      expect([...(seen.get(`${id} 503`) ?? [])], id).toContain('ledger_unavailable')
    }
  })
})

// ---- the A2A front door ----------------------------------------------------------------------

describe('the A2A front door in the document', () => {
  it('POST /a2a/ at the JSON-RPC level, bearer security, and its example answered by a real gateway; the HTTP refusals it lists', async ({ gw }) => {
    const rpc = byId('callAgent').op
    expect(rpc.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/A2aRequest' })
    expect(rpc.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/A2aResponse' })
    // the document's bearer, as every scoped route
    expect(rpc.security).toBeUndefined()
    expect(doc.security).toEqual([{ bearer: [] }])
    expect((rpc.parameters as Json[]).map((q) => `${q.in} ${q.name}`)).toContain('header a2a-version')
    expect(A2aRequestSchema.safeParse(example('callAgent')).success).toBe(true)
    expect(A2aResponseSchema.safeParse(doc.components.schemas.A2aResponse.example).success).toBe(true)

    const t = gw.tokens.reader
    const res = await hit(gw.url, 'callAgent', { token: t, body: example('callAgent') })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: (example('callAgent') as Json).id, result: { kind: 'message', role: 'agent' } })
    expect(A2aResponseSchema.safeParse(res.body).success).toBe(true)
    // a JSON-RPC error is a 200 with the documented error shape
    const bad = await hit(gw.url, 'callAgent', { token: t, rawBody: '{"not json' })
    expect(bad.status).toBe(200)
    expect(bad.body.error.code).toBe(-32700)
    expect(A2aResponseSchema.safeParse(bad.body).success).toBe(true)
    // what HTTP answers, listed for the route
    expect((await hit(gw.url, 'callAgent', { body: example('callAgent') })).status).toBe(401)
    expect((await hit(gw.url, 'callAgent', { token: t, body: { ...(example('callAgent') as Json), filler: 'x'.repeat(70 * 1024) } })).status).toBe(413)
    await hitRaw(gw.url, 'callAgent', 'Expect: tea-please\r\n', { token: t })
    await hitRaw(gw.url, 'callAgent', `Authorization: Bearer ${t}\r\n`, { token: t })
    await hitRaw(gw.url, 'callAgent', `X-Padding: ${'p'.repeat(20 * 1024)}\r\n`, { token: t })
  })

  it('the card routes need no token and answer the documented shapes; the key route is 404 until a key is set, then serves it', async ({ gw, startPair }) => {
    for (const id of ['getAgentCard', 'getAgentCardAtOldPath']) {
      for (const version of ['0.3', '1.0']) {
        const res = await hit(gw.url, id, { headers: { 'a2a-version': version } })
        expect(res.status, id).toBe(200)
        expect(A2aAgentCardSchema.safeParse(res.body).success, `${id} ${version}`).toBe(true)
      }
      await hitRaw(gw.url, id, 'Expect: tea-please\r\n')
      await hitRaw(gw.url, id, `X-Padding: ${'p'.repeat(20 * 1024)}\r\n`)
    }
    expect((await hit(gw.url, 'getAgentCardKeys')).body.error.code).toBe('not_found')
    const { privateKey } = await generateKeyPair('ES256', { extractable: true })
    const key = { ...(await exportJWK(privateKey)), kid: 'gw-card-1', alg: 'ES256' }
    const signed = await startPair({ env: { GATEWAY_CARD_SIGNING_KEY: JSON.stringify(key), GATEWAY_PUBLIC_URL: 'https://gateway.example/' } })
    const keys = await hit(signed.gw.url, 'getAgentCardKeys')
    expect(keys.status).toBe(200)
    expect(A2aJwksSchema.safeParse(keys.body).success).toBe(true)
    expect(keys.body.keys[0]).toMatchObject({ kid: 'gw-card-1', kty: 'EC' })
    expect(keys.body.keys[0].d).toBeUndefined()
    // one signature per distinct canonical form (docs/design.md#signed-cards): the v0.3 card's three
    expect(A2aAgentCardSchema.parse((await hit(signed.gw.url, 'getAgentCard')).body).signatures).toHaveLength(3)
  })
})
