// The simulator's admin routes (docs/design.md#simulator-faults) over real sockets: faults set,
// listed and cleared at run time act on the next JSON-RPC calls exactly as the programmatic API's
// do; held requests are listed, delivered and dropped; bad bodies are 400 with a clear error;
// nothing under /_sim/ is recorded as a request to the remote. The loopback-only rule: a real
// connection from another loopback address (127.0.0.2) is let in; a non-loopback peer cannot be
// made here without sending to an address outside loopback, so its refusal is tested through
// Fastify's inject with a non-loopback remoteAddress (the same onRequest hook), and the predicate
// on its own.
import { connect } from 'node:net'
import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import { buildSimulatorApp } from '../../src/simulator/app.js'
import { createState } from '../../src/simulator/state.js'
import { resolveOptions } from '../../src/simulator/options.js'
import { isLoopbackPeer } from '../../src/simulator/index.js'
import { CONSTRAINTS, claim, control, submitParams } from './control-helpers.js'
import { argusParams, call, rpc, useSimulator } from './helpers.js'

const start = useSimulator()
const JSON_TYPE = { 'content-type': 'application/json' }

/** a submission's request id */
const rid = (params: Record<string, unknown>): string => (params.message as { metadata: { argus_supervisor: { request_id: string } } }).metadata.argus_supervisor.request_id

async function admin (url: string, method: 'GET' | 'POST' | 'DELETE', path: string, body?: string): Promise<{ status: number; json: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await request(`${url}/_sim${path}`, { method, body, headers: body === undefined ? {} : JSON_TYPE })
  return { status: res.statusCode, json: await res.body.json() }
}

describe('/_sim/faults', () => {
  it('sets faults from a rule string or an array, lists them with what remains, clears them; each acts like an injected one', async () => {
    const s = await start({ profile: 'campaign-control' })
    expect(await admin(s.url, 'GET', '/faults')).toEqual({ status: 200, json: { faults: [] } })
    const added = await admin(s.url, 'POST', '/faults', JSON.stringify({ faults: 'drop-after-apply@submit:1, status=503@tasks/get:2' }))
    expect(added).toEqual({ status: 200, json: { added: 2, faults: [{ rule: 'drop-after-apply@submit:1', remaining: 1 }, { rule: 'status=503@tasks/get:2', remaining: 2 }] } })
    expect((await admin(s.url, 'POST', '/faults', JSON.stringify({ faults: ['method-not-found@intervene'] }))).json.added).toBe(1)

    // an Argus read is a message/send too, but not a submission: it does not take the fault
    expect((await rpc(s, 'message/send', argusParams('supervisor.health'))).json.result.status.state).toBe('completed')
    // the submission is applied, and its connection dropped: the ambiguous write
    const lease = await claim(s)
    const params = submitParams(lease.epoch)
    const requestId = rid(params)
    await expect(control(s, 'message/send', params)).rejects.toThrow(/other side closed|socket hang up|ECONNRESET/)
    expect(s.control.applied().map((m) => [m.operation, m.requestId])).toContainEqual(['submit', requestId])
    // request_status knows it, with the task
    const status = await control(s, 'campaign/request_status', { campaign_id: 'camp-1', request_id: requestId })
    expect(status.json.result).toMatchObject({ request_id: requestId, state: 'applied', task_id: expect.any(String) })
    expect((await admin(s.url, 'GET', '/faults')).json.faults).toEqual([{ rule: 'status=503@tasks/get:2', remaining: 2 }, { rule: 'method-not-found@intervene', remaining: null }])
    expect((await rpc(s, 'tasks/get', { id: 'task-demo-1' })).status).toBe(503)
    const intervene = await control(s, 'campaign/intervene', { campaign_id: 'camp-1', controller_id: 'ctl-me', controller_epoch: lease.epoch, request_id: 'poke-1', constraints: CONSTRAINTS, intervention: {} })
    expect(intervene.json.error).toEqual({ code: -32601, message: 'Method not found' })

    expect(await admin(s.url, 'DELETE', '/faults')).toEqual({ status: 200, json: { cleared: 2 } })
    expect((await rpc(s, 'tasks/get', { id: 'task-demo-1' })).status).toBe(200)
    expect(s.faults()).toEqual([])
    // the remote's record holds only what was sent to the remote
    expect(s.received.some((r) => r.path.startsWith('/_sim'))).toBe(false)
  })

  it('faults given at start (SIMULATOR_FAULTS) are listed the same way; programmatic ones in the rule syntax', async () => {
    const s = await start({ profile: 'campaign-control', faults: [{ target: { operation: 'submit' }, fault: { kind: 'drop' }, times: 1, text: 'drop-after-apply@submit:1' }] })
    s.inject({ rpcMethod: 'tasks/get' }, { kind: 'delay', ms: 250 }, 3)
    s.inject('card', { kind: 'drop' })
    expect((await admin(s.url, 'GET', '/faults')).json.faults).toEqual([
      { rule: 'drop-after-apply@submit:1', remaining: 1 },
      { rule: 'delay=250ms@tasks/get', remaining: 3 },
      { rule: 'drop@card', remaining: null }
    ])
  })

  it('bad bodies: 400 with a clear error, nothing added', async () => {
    const s = await start({ profile: 'campaign-control' })
    const bad = async (body: string | undefined, method: 'POST' | 'DELETE' = 'POST', path = '/faults'): Promise<string> => {
      const res = await admin(s.url, method, path, body)
      expect(res.status, body).toBe(400)
      expect(res.json.error.code).toBe('invalid_request')
      return res.json.error.message as string
    }
    expect(await bad(undefined)).toBe('the body must be JSON: {"faults": "<rule>[,<rule>…]"}')
    expect(await bad('{"faults":')).toBe('the body is not valid JSON')
    expect(await bad('[]')).toBe('the body must be a JSON object: {"faults": "<rule>[,<rule>…]"}')
    expect(await bad('{}')).toBe('faults must be a string of rules, e.g. "drop-after-apply@submit:1", or an array of 1 to 32 of them')
    expect(await bad('{"fault":"hold@submit"}')).toBe('unknown field "fault"')
    expect(await bad('{"faults":""}')).toMatch(/^faults must be a string of rules/)
    expect(await bad('{"faults":[]}')).toMatch(/^faults must be a string of rules/)
    expect(await bad('{"faults":42}')).toMatch(/^faults must be a string of rules/)
    expect(await bad('{"faults":"hold@submit,delay=5@rpc,bogus@rpc"}')).toMatch(/^faults: "delay=5@rpc": delay needs a duration such as 500ms or 2s, not "5"; "bogus@rpc": unknown fault "bogus"/)
    expect(await bad('{"x":1}', 'DELETE')).toBe('unknown field "x"')
    expect(await bad('{"x":1}', 'POST', '/held/deliver')).toBe('unknown field "x"')
    expect(await bad('"drop"', 'POST', '/held/drop')).toBe('the body must be empty or {}')
    expect(s.faults()).toEqual([])
    // an operation target on a simulator without campaign control
    const plain = await start()
    const res = await admin(plain.url, 'POST', '/faults', '{"faults":"drop-after-apply@submit"}')
    expect(res).toEqual({ status: 400, json: { error: { code: 'invalid_request', message: 'faults: "drop-after-apply@submit": submit is a campaign-control operation, and this simulator does not serve campaign control (SIMULATOR_PROFILE=campaign-control)' } } })
  })

  it('answers a real connection from another loopback address (127.0.0.2), without the remote\'s credential', async () => {
    const s = await start({ secret: 'sim-secret-0123456789abcdef', host: '0.0.0.0' })
    const port = Number(new URL(s.url).port)
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, localAddress: '127.0.0.2' }, () => {
        socket.end('GET /_sim/faults HTTP/1.1\r\nhost: sim\r\nconnection: close\r\n\r\n')
      })
      let text = ''
      socket.on('data', (d: Buffer) => { text += d.toString() })
      socket.on('end', () => resolve(text))
      socket.on('error', reject)
    })
    expect(raw).toMatch(/^HTTP\/1\.1 200 /)
    expect(raw).toContain('{"faults":[]}')
    // the remote's own routes still want the credential
    expect((await call(s, 'POST', '/a2a/', { body: '{}' })).status).toBe(401)
  })
})

describe('/_sim/held', () => {
  it('lists the requests a hold fault parked, delivers them (applied, answered) or drops them (lost)', async () => {
    const s = await start({ profile: 'campaign-control' })
    const lease = await claim(s)
    await admin(s.url, 'POST', '/faults', '{"faults":"hold@submit:2"}')
    const first = submitParams(lease.epoch)
    const second = submitParams(lease.epoch)
    // the JSON-RPC id is the request id, as the gateway sends it
    const firstAnswer = rpc(s, 'message/send', first, { id: rid(first) })
    const secondAnswer = rpc(s, 'message/send', second, { id: rid(second) }).catch((err: Error) => err)
    await expect.poll(() => s.held().length).toBe(2)
    const ids = [first, second].map(rid)
    expect((await admin(s.url, 'GET', '/held')).json).toEqual({ held: ids.map((id) => ({ method: 'message/send', id })) })
    expect(s.control.applied().filter((m) => m.operation === 'submit')).toEqual([])

    // deliver takes both: the first is then answered; drop afterwards finds none
    expect((await admin(s.url, 'POST', '/held/deliver')).json).toEqual({ delivered: 2 })
    expect((await firstAnswer).json.result.kind).toBe('task')
    await secondAnswer
    expect(s.control.applied().filter((m) => m.operation === 'submit').map((m) => m.requestId)).toEqual(ids)
    expect((await admin(s.url, 'POST', '/held/drop', '{}')).json).toEqual({ dropped: 0 })

    await admin(s.url, 'POST', '/faults', '{"faults":"hold@submit:1"}')
    const lost = submitParams(lease.epoch)
    const lostAnswer = rpc(s, 'message/send', lost, { id: rid(lost) })
    await expect.poll(() => s.held().length).toBe(1)
    expect((await admin(s.url, 'POST', '/held/drop')).json).toEqual({ dropped: 1 })
    await expect(lostAnswer).rejects.toThrow()
    expect(s.control.applied().map((m) => m.requestId)).not.toContain(rid(lost))
  })
})

describe('loopback only', () => {
  it('the predicate: 127.0.0.0/8, IPv4-mapped loopback and ::1; nothing else', () => {
    for (const a of ['127.0.0.1', '127.0.0.2', '127.255.255.254', '::1', '::ffff:127.0.0.1', '::FFFF:127.1.2.3']) expect(isLoopbackPeer(a), a).toBe(true)
    for (const a of [undefined, '', '192.0.2.7', '10.0.0.1', '::ffff:10.0.0.1', 'fd00::2', 'fe80::1', '::', '0.0.0.0', '128.0.0.1', '127.0.0.1.example', '::2']) expect(isLoopbackPeer(a), String(a)).toBe(false)
  })

  it('a non-loopback peer gets 403 with a clear JSON error on every admin route, and nothing changes', async () => {
    const state = createState(resolveOptions({ profile: 'campaign-control' }))
    const app = buildSimulatorApp(state, undefined)
    try {
      for (const [method, url, payload] of [['GET', '/_sim/faults'], ['POST', '/_sim/faults', '{"faults":"drop-after-apply@submit"}'], ['DELETE', '/_sim/faults'], ['GET', '/_sim/held'], ['POST', '/_sim/held/deliver'], ['POST', '/_sim/held/drop']] as const) {
        const res = await app.inject({ method, url, payload, remoteAddress: '192.0.2.7' })
        expect(res.statusCode, `${method} ${url}`).toBe(403)
        expect(res.json()).toEqual({ error: { code: 'forbidden', message: 'the simulator\'s admin routes answer only to loopback peers (127.0.0.0/8, ::1)' } })
      }
      expect(state.faults.list()).toEqual([])
      // the same request from loopback is served
      const ok = await app.inject({ method: 'POST', url: '/_sim/faults', payload: '{"faults":"drop-after-apply@submit"}', remoteAddress: '127.0.0.1' })
      expect(ok.statusCode).toBe(200)
    } finally {
      await app.close()
    }
  })
})
