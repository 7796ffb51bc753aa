// The one read call (src/argus/read-rpc.ts, docs/design.md#argus-reads): each way a read fails
// becomes the same contract error whichever read it is — the Argus reads, tasks/get,
// read_control and request_status — and what differs between them (the capability marked, the
// request id named, the missing prerequisites, the caller's own codes) is what each passes in.
import { describe, expect, it } from 'vitest'
import { RPC_CODES } from '../../schemas/jsonrpc.js'
import { readRpc, type ReadRpc } from '../../src/argus/read-rpc.js'
import { GatewayError } from '../../src/core/errors.js'
import type { Discovery } from '../../src/discovery/discovery.js'
import { WIRE_V03, WIRE_V10, type A2aWire } from '../../src/upstream/a2a-wire.js'
import { UpstreamCallError } from '../../src/upstream/errors.js'
import { createFakeUpstream, type Answer } from '../helpers/fake-upstream.js'

function setup (answer: Answer) {
  const client = createFakeUpstream()
  client.on('m', answer)
  const marked: string[] = []
  const refused: string[] = []
  const discovery = {
    markMethodNotFound: (name: string) => { marked.push(name) },
    markVersionRefused: (v: string) => { refused.push(v) }
  } as unknown as Discovery
  const read = async (r: Partial<ReadRpc> = {}, wire: A2aWire = WIRE_V03): Promise<unknown> =>
    await readRpc({ client, discovery }, wire, { call: { method: 'm', params: { a: 1 }, op: 'tasks.get', deadline: 1e15 }, capability: 'a2a.tasks.get', ...r })
  return { client, marked, refused, read }
}

const failure = async (p: Promise<unknown>): Promise<GatewayError> => {
  const err = await p.then(() => undefined, (e: unknown) => e)
  expect(err).toBeInstanceOf(GatewayError)
  return err as GatewayError
}

describe('readRpc', () => {
  it('answers the result of a read, sent as a read with the call as given', async () => {
    const s = setup({ result: { id: 't' } })
    expect(await s.read({ call: { method: 'm', params: { id: 't' }, op: 'tasks.get', maxBytes: 9, budgeted: true, headers: { h: '1' } } })).toEqual({ id: 't' })
    expect(s.client.calls).toEqual([{ method: 'm', params: { id: 't' }, op: 'tasks.get', maxBytes: 9, budgeted: true, headers: { h: '1' }, kind: 'read' }])
  })

  it('a thrown call is the read failure mapping, with the request id when given', async () => {
    const s = setup({ throws: new UpstreamCallError('timeout') })
    expect((await failure(s.read({ requestId: 'argus-1' }))).toBody().error).toMatchObject({ code: 'upstream_timeout', requestId: 'argus-1' })
    const t = setup({ throws: new UpstreamCallError('unreachable', { nothingSent: true }) })
    const e = await failure(t.read())
    expect(e.code).toBe('upstream_unavailable')
    expect(e.requestId).toBeUndefined()
  })

  it('-32601 marks the caller\'s capability and is capability_unavailable, with its prerequisites if any', async () => {
    const s = setup({ error: { code: RPC_CODES.methodNotFound } })
    const bare = await failure(s.read())
    expect(bare.toBody()).toEqual({ error: { code: 'capability_unavailable', message: bare.message, retryable: bare.retryable } })
    const named = await failure(s.read({ capability: 'control.read_control', requestId: 'r-1', missingOnNotFound: ['operation read_control answered method not found'] }))
    expect(named.toBody().error).toMatchObject({ code: 'capability_unavailable', requestId: 'r-1', missingPrerequisites: ['operation read_control answered method not found'] })
    expect(s.marked).toEqual(['a2a.tasks.get', 'control.read_control'])
  })

  it('-32009 is a refused version on v1.0 only; on v0.3 it is an ordinary rejection', async () => {
    const s = setup({ error: { code: RPC_CODES.versionNotSupported } })
    const refused = await failure(s.read({ requestId: 'r-2' }, WIRE_V10))
    expect(refused.toBody().error).toMatchObject({ code: 'capability_unavailable', requestId: 'r-2' })
    expect(refused.missingPrerequisites?.[0]).toContain('1.0')
    expect(s.refused).toEqual(['1.0'])
    expect((await failure(s.read({}, WIRE_V03))).code).toBe('upstream_rejected')
    expect(s.marked).toEqual([])
  })

  it('any other error is the caller\'s own code when it names one, else upstream_rejected', async () => {
    const s = setup({ error: { code: RPC_CODES.taskNotFound } })
    const rejected = (error: { code: number }): GatewayError | undefined => error.code === RPC_CODES.taskNotFound ? new GatewayError('not_found', { message: 'The task does not exist.' }) : undefined
    expect((await failure(s.read({ rejected }))).code).toBe('not_found')
    expect((await failure(s.read({ requestId: 'r-3' }))).toBody().error).toMatchObject({ code: 'upstream_rejected', requestId: 'r-3' })
    const other = setup({ error: { code: -32000 } })
    expect((await failure(other.read({ rejected }))).code).toBe('upstream_rejected')
  })
})
