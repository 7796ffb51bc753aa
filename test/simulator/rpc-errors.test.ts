import { afterEach, describe, expect, it } from 'vitest'
import { startSimulator } from '../../src/simulator/index.js'
import type { Simulator, SimulatorProfile } from '../../src/simulator/index.js'
import { argusParams, call, fixture, fixtureJson, keys, rpc } from './helpers.js'

let sim: Simulator | undefined
afterEach(async () => {
  await sim?.close()
  sim = undefined
})
async function start (profile: SimulatorProfile): Promise<Simulator> {
  sim = await startSimulator({ profile })
  return sim
}

/** The status line, content type and body of FastA2A's plain-text 500 (fixture). */
function fastA2A500 (): { status: number; contentType: string; body: string } {
  const [head = '', body = ''] = fixture('fasta2a-0.5/response-unknown-method.http').split(/\r?\n\r?\n/)
  const lines = head.split(/\r?\n/)
  const contentType = lines.find((l) => l.toLowerCase().startsWith('content-type:'))?.split(':')[1]?.trim() ?? ''
  return { status: Number(lines[0]?.split(' ')[1]), contentType, body: body.trim() }
}

const snakeCases: Array<[string, string, (p: Record<string, unknown>) => unknown]> = [
  ['message_id', 'message/send', (p) => {
    const message: Record<string, unknown> = { ...(p.message as Record<string, unknown>), message_id: 'x' }
    delete message.messageId
    return { ...p, message }
  }],
  ['context_id', 'message/send', (p) => ({ ...p, message: { ...(p.message as object), context_id: 'c' } })],
  ['accepted_output_modes', 'message/send', (p) => ({ ...p, configuration: { accepted_output_modes: ['application/json'] } })],
  ['history_length', 'tasks/get', () => ({ id: 'task-demo-1', history_length: 0 })],
  ['task_id', 'tasks/cancel', () => ({ task_id: 'task-demo-1' })]
]

describe('JSON-RPC refusals, FastA2A profiles (plain-text 500)', () => {
  for (const profile of ['openoperator', 'fasta2a'] as const) {
    it(`${profile}: unknown method is the fixture's plain 500, not -32601`, async () => {
      const s = await start(profile)
      const answer = await rpc(s, 'campaign/claim_control', { campaign_id: 'camp-1' })
      const expected = fastA2A500()
      expect(answer.status).toBe(expected.status)
      expect(answer.headers['content-type']).toBe(expected.contentType)
      expect(answer.text).toBe(expected.body)
      expect(answer.headers['content-length']).toBe(String(expected.body.length))
    })

    it(`${profile}: snake_case keys and missing fields are refused with a plain 500`, async () => {
      const s = await start(profile)
      for (const [, method, mutate] of snakeCases) {
        const answer = await rpc(s, method, mutate(argusParams('supervisor.health')))
        expect(answer.status).toBe(500)
        expect(answer.text).toBe('Internal Server Error')
      }
      expect((await rpc(s, 'message/send', { configuration: { acceptedOutputModes: [] } })).status).toBe(500)
      // The camelCase original is accepted.
      expect((await rpc(s, 'message/send', argusParams('supervisor.health'))).status).toBe(200)
    })

    it(`${profile}: task not found is FastA2A's -32001 shape`, async () => {
      const s = await start(profile)
      const answer = await rpc(s, 'tasks/get', { id: 'does-not-exist' }, { id: 'get-2' })
      expect(answer.json).toEqual(fixtureJson('fasta2a-0.5/response-task-not-found.json'))
    })
  }

  it('fasta2a: invalid JSON is a plain 500 (one pydantic adapter validates the raw bytes)', async () => {
    const s = await start('fasta2a')
    const answer = await call(s, 'POST', '/a2a/', { body: '{"jsonrpc":', headers: { 'content-type': 'application/json' } })
    expect(answer.status).toBe(500)
    expect(answer.text).toBe('Internal Server Error')
  })

  it('openoperator: invalid JSON is -32700 with a null id', async () => {
    const s = await start('openoperator')
    const answer = await call(s, 'POST', '/a2a/', { body: 'not json', headers: { 'content-type': 'application/json' } })
    expect(answer.status).toBe(200)
    expect(answer.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } })
    expect(s.received[0]?.rawBody).toBe('not json')
    expect(s.received[0]?.json).toBeUndefined()
  })
})

describe('JSON-RPC refusals, a2a-js profile (JSON-RPC errors)', () => {
  it('matches the recorded -32601, -32700 and -32001 answers', async () => {
    const s = await start('a2a-js')
    const notFound = await rpc(s, 'campaign/claim_control', {}, { id: 'x-1' })
    expect(notFound.json).toEqual(fixtureJson('a2a-js-sdk-1.3.0/response-method-not-found.json'))
    const parse = await call(s, 'POST', '/a2a/', { body: '{oops', headers: { 'content-type': 'application/json' } })
    expect(parse.json).toEqual(fixtureJson('a2a-js-sdk-1.3.0/response-parse-error.json'))
    const task = await rpc(s, 'tasks/get', { id: 'does-not-exist' }, { id: 'get-2' })
    expect(task.json).toEqual(fixtureJson('a2a-js-sdk-1.3.0/response-task-not-found.json'))
  })

  it('refuses snake_case and missing fields with -32602 and the request id', async () => {
    const s = await start('a2a-js')
    const shape = keys(fixtureJson('a2a-js-sdk-1.3.0/response-invalid-params.json').error)
    for (const [key, method, mutate] of snakeCases) {
      const answer = await rpc(s, method, mutate(argusParams('supervisor.health')), { id: 'p-1' })
      expect(answer.json.id).toBe('p-1')
      expect(answer.json.error.code).toBe(-32602)
      expect(keys(answer.json.error)).toEqual(shape)
      expect(answer.json.error.message).toContain(key)
    }
    const missing = await rpc(s, 'message/send', {}, { id: 'p-1' })
    expect(missing.json.error.code).toBe(-32602)
  })

  it('refuses a malformed JSON-RPC frame with -32600', async () => {
    const s = await start('a2a-js')
    const answer = await call(s, 'POST', '/a2a/', { body: JSON.stringify({ jsonrpc: '1.0', id: 'f-1', method: 'tasks/get', params: {} }) })
    expect(answer.json).toMatchObject({ id: 'f-1', error: { code: -32600 } })
  })
})
