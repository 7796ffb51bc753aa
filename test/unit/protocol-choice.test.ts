// The protocol generation chosen from the card (docs/design.md#protocol-versions): interfaces at
// the gateway's own endpoint, the highest version both sides speak, URLs compared and reported,
// never followed; and the v1.0 wire read back into v0.3's shape.
import { describe, expect, it } from 'vitest'
import { chooseProtocol, spokenVersion } from '../../src/discovery/protocol.js'
import { WIRE_V03, WIRE_V10 } from '../../src/upstream/a2a-wire.js'

const O = 'https://oo.example'
const iface = (url: string, protocolVersion: string, protocolBinding = 'JSONRPC') => ({ url, protocolBinding, protocolVersion })

describe('chooseProtocol', () => {
  it('a v0.x card (no supportedInterfaces) is spoken as 0.3, whatever 0.x it declares', () => {
    expect(chooseProtocol({ protocolVersion: '0.2.5', url: `${O}/a2a/` }, O, '/a2a')).toMatchObject({ version: '0.3', urlMismatch: false })
    expect(chooseProtocol({}, O, '/a2a').version).toBe('0.3')
    expect(chooseProtocol({ protocolVersion: '2.0' }, O, '/a2a')).toMatchObject({ version: undefined })
  })

  it('takes the highest version at the endpoint, not the first listed, and keeps the others offered to fall back to', () => {
    const c = chooseProtocol({ supportedInterfaces: [iface(`${O}/a2a/`, '0.3'), iface(`${O}/a2a/`, '1.0')] }, O, '/a2a')
    expect(c.version).toBe('1.0')
    expect(c.offered).toEqual(['1.0', '0.3'])
    expect(chooseProtocol({ supportedInterfaces: [iface(`${O}/a2a/`, '1.0'), iface(`${O}/a2a/v2/`, '0.3')] }, O, '/a2a').offered).toEqual(['1.0'])
    expect(chooseProtocol({ protocolVersion: '0.3' }, O, '/a2a').offered).toEqual(['0.3'])
    expect(c.interfaces.map((i) => i.atEndpoint)).toEqual([true, true])
  })

  it('ignores interfaces elsewhere: another path, another binding', () => {
    const c = chooseProtocol({ supportedInterfaces: [iface(`${O}/a2a/v1/`, '1.0'), iface(`${O}/a2a/`, '1.0', 'GRPC'), iface(`${O}/a2a`, '0.3')] }, O, '/a2a')
    expect(c.version).toBe('0.3')
    expect(c.urlMismatch).toBe(false)
  })

  it('no JSON-RPC interface at the endpoint, or only versions not spoken: nothing is chosen, and why', () => {
    expect(chooseProtocol({ supportedInterfaces: [iface(`${O}/rpc/`, '1.0')] }, O, '/a2a').reason).toBe(`the card advertises no JSON-RPC interface at ${O}/a2a/`)
    const c = chooseProtocol({ supportedInterfaces: [iface(`${O}/a2a/`, '2.0'), iface(`${O}/a2a/`, '1.1')] }, O, '/a2a')
    expect(c.version).toBeUndefined()
    expect(c.reason).toBe(`the card's JSON-RPC interface at ${O}/a2a/ speaks A2A 2.0, 1.1; the gateway speaks 1.0 and 0.3`)
  })

  it('an interface URL of another origin is reported (cardUrlMismatch), never called', () => {
    const c = chooseProtocol({ supportedInterfaces: [iface('https://evil.example/a2a/', '1.0')] }, O, '/a2a')
    // the same path at another origin: as a v0.x card's url of another origin, reported and the configured origin spoken to
    expect(c).toMatchObject({ version: '1.0', urlMismatch: true })
    expect(chooseProtocol({ supportedInterfaces: [iface(`${O}/a2a/`, '1.0'), iface('https://x.example/grpc', '1.0', 'GRPC')] }, O, '/a2a').urlMismatch).toBe(true)
    expect(chooseProtocol({ supportedInterfaces: [{ protocolBinding: 'JSONRPC' }] }, O, '/a2a').urlMismatch).toBe(true)
  })

  it('reads versions strictly', () => {
    expect(['0.3', '0.2.5', '1.0', '1.0.1', '1.1', '2', 'v1.0', 1].map(spokenVersion)).toEqual(['0.3', '0.3', '1.0', '1.0', undefined, undefined, undefined, undefined])
  })
})

describe('the v1.0 wire', () => {
  it('writes a v0.3 send as v1.0: method, header, returnImmediately, parts without kind, role', () => {
    const p = WIRE_V10.sendParams({
      configuration: { blocking: true, acceptedOutputModes: ['application/json'] },
      message: { role: 'user', kind: 'message', messageId: 'r-1', extensions: ['urn:x'], metadata: { 'urn:x': { a: 1 } }, parts: [{ kind: 'data', data: { params: {} } }, { kind: 'text', text: 'hi' }] }
    })
    expect(p).toEqual({
      configuration: { acceptedOutputModes: ['application/json'], returnImmediately: false },
      message: { role: 'ROLE_USER', messageId: 'r-1', extensions: ['urn:x'], metadata: { 'urn:x': { a: 1 } }, parts: [{ data: { params: {} } }, { text: 'hi' }] }
    })
    expect((WIRE_V10.sendParams({ configuration: { blocking: false }, message: {} }).configuration as Record<string, unknown>).returnImmediately).toBe(true)
    expect(WIRE_V10.method('message/send')).toBe('SendMessage')
    expect(WIRE_V10.headers({ 'x-a2a-extensions': 'urn:x' })).toEqual({ 'a2a-version': '1.0', 'x-a2a-extensions': 'urn:x', 'a2a-extensions': 'urn:x' })
    expect(WIRE_V03.headers()).toEqual({})
  })

  it('reads a v1.0 task into v0.3 shape; unknown states read as unknown; a result of neither wrapper is nothing', () => {
    const task = WIRE_V10.sendResult({
      task: {
        id: 't-1',
        contextId: 'c-1',
        status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'more?' }] } },
        artifacts: [{ artifactId: 'a', name: 'n', parts: [{ data: { x: 1 } }, { url: 'https://f.example/x', mediaType: 'text/plain', filename: 'x.txt' }, { raw: 'AAEC' }, { mystery: true }] }],
        history: [{ messageId: 'h' }],
        metadata: { argus_supervisor: { stage: 's' } }
      }
    })
    expect(task).toEqual({
      kind: 'task',
      id: 't-1',
      contextId: 'c-1',
      status: { state: 'input-required', message: { kind: 'message', messageId: 'm', parts: [{ kind: 'text', text: 'more?' }] } },
      artifacts: [{ artifactId: 'a', name: 'n', parts: [{ kind: 'data', data: { x: 1 } }, { kind: 'file', file: { uri: 'https://f.example/x', mimeType: 'text/plain', name: 'x.txt' } }, { kind: 'file', file: { bytes: 'AAEC', mimeType: undefined, name: undefined } }, { kind: 'unknown' }] }],
      metadata: { argus_supervisor: { stage: 's' } }
    })
    expect((WIRE_V10.task({ id: 't', status: { state: 'TASK_STATE_UNSPECIFIED' } }) as { status: { state: string } }).status.state).toBe('unknown')
    expect((WIRE_V10.task({ id: 't', status: { state: 'completed' } }) as { status: { state: string } }).status.state).toBe('unknown')
    expect(WIRE_V10.sendResult({ kind: 'task', id: 't', status: { state: 'TASK_STATE_COMPLETED' } })).toBeUndefined()
    expect(WIRE_V10.sendResult({ message: { messageId: 'm', parts: [{ data: {} }] } })).toEqual({ kind: 'message', messageId: 'm', parts: [{ kind: 'data', data: {} }] })
  })

  it('v0.3 is the identity', () => {
    const p = { message: { kind: 'message' } }
    expect(WIRE_V03.sendParams(p)).toBe(p)
    expect(WIRE_V03.sendResult(p)).toBe(p)
  })
})
