// The pure rules of a mutation (docs/design.md#campaign-control): the constraints envelope
// byte for byte, body rules at any depth and in any case, aliases, request ids, the params
// hash, and the outcome classes of every kind of answer.
import { describe, expect, it } from 'vitest'
import { runs } from '../helpers/runs.js'
import fc from 'fast-check'
import { checkBodyRules, constraintsEnvelope, normaliseAliases, paramsHash, resolveRequestId } from '../../src/control/rules.js'
import { classifyAnswer, classifyFailure } from '../../src/control/outcome.js'
import { parseLeaseResult } from '../../src/control/wire.js'
import { UpstreamCallError } from '../../src/upstream/errors.js'
import { GatewayError } from '../../src/core/errors.js'

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn()
  } catch (err) {
    return err instanceof GatewayError ? err.code : 'not a GatewayError'
  }
  return undefined
}

describe('the constraints envelope', () => {
  it('is exactly the seed\'s object, in order, and a fresh copy each time', () => {
    expect(JSON.stringify(constraintsEnvelope())).toBe('{"version":1,"execution":"remote_only","allow_publication":false,"allow_destructive_git":false,"allow_credential_changes":false,"allow_force_push":false,"allow_merge":false}')
    const a = constraintsEnvelope()
    a.allow_merge = true
    expect(constraintsEnvelope().allow_merge).toBe(false)
  })
})

describe('body rules', () => {
  it('refuses constraints at any depth and in any letter case', () => {
    expect(codeOf(() => checkBodyRules({ constraints: {} }))).toBe('constraints_not_relaxable')
    expect(codeOf(() => checkBodyRules({ intervention: { a: [{ b: { CONSTRAINTS: 1 } }] } }))).toBe('constraints_not_relaxable')
    expect(codeOf(() => checkBodyRules({ parts: [{ kind: 'data', data: { Constraints: null } }] }))).toBe('constraints_not_relaxable')
  })

  it('refuses reserved fields, camelCase or dashed spellings and urn: keys included', () => {
    for (const key of ['argus_supervisor', 'controller_id', 'controller_epoch', 'controllerId', 'Controller-Epoch', 'argusSupervisor', 'urn:openoperator:x', 'URN:thing']) {
      expect(codeOf(() => checkBodyRules({ intervention: { deep: { [key]: 1 } } })), key).toBe('reserved_field')
    }
  })

  it('answers constraints_not_relaxable first when both are present', () => {
    expect(codeOf(() => checkBodyRules({ controller_id: 'x', intervention: { constraints: {} } }))).toBe('constraints_not_relaxable')
  })

  it('passes ordinary bodies', () => {
    expect(codeOf(() => checkBodyRules({ requestId: 'req-00000001', intervention: { pause: true, reason: 'constraints are fine as a value' } }))).toBeUndefined()
  })

  it('lets the one reserved key its caller writes stand in its one object, exactly as spelt, and nowhere else (the front door\'s submission)', () => {
    const metadata = { argus_supervisor: { campaign_id: 'camp-1' } }
    const own = { holder: metadata, key: 'argus_supervisor' }
    expect(codeOf(() => checkBodyRules({ message: { metadata } }, own))).toBeUndefined()
    expect(codeOf(() => checkBodyRules({ message: { metadata, extra: { argus_supervisor: {} } } }, own))).toBe('reserved_field')
    expect(codeOf(() => checkBodyRules({ message: { metadata: { Argus_Supervisor: {} } } }, { holder: metadata, key: 'argus_supervisor' }))).toBe('reserved_field')
    const spelt = { Argus_Supervisor: {} }
    expect(codeOf(() => checkBodyRules({ message: { metadata: spelt } }, { holder: spelt, key: 'argus_supervisor' }))).toBe('reserved_field')
    // it exempts that key alone: whatever the object holds besides, and beneath, is checked
    const besides = { ...metadata, controller_id: 'x' }
    expect(codeOf(() => checkBodyRules({ message: { metadata: besides } }, { holder: besides, key: 'argus_supervisor' }))).toBe('reserved_field')
    const withOther = { argus_supervisor: { controllerId: 'x' } }
    expect(codeOf(() => checkBodyRules({ message: { metadata: withOther } }, { holder: withOther, key: 'argus_supervisor' }))).toBe('reserved_field')
    const withConstraints = { argus_supervisor: { constraints: {} } }
    expect(codeOf(() => checkBodyRules({ message: { metadata: withConstraints } }, { holder: withConstraints, key: 'argus_supervisor' }))).toBe('constraints_not_relaxable')
  })

  it('finds a planted constraints key anywhere in any generated body', () => {
    const key = fc.constantFrom('constraints', 'Constraints', 'CONSTRAINTS', 'conStraints')
    const json = fc.jsonValue({ maxDepth: 4 })
    fc.assert(fc.property(json, key, fc.nat(5), (v, k, depth) => {
      let planted: unknown = { [k]: v }
      for (let i = 0; i < depth; i++) planted = i % 2 === 0 ? [planted] : { nested: planted }
      return codeOf(() => checkBodyRules({ intervention: planted })) === 'constraints_not_relaxable'
    }), { numRuns: runs(100) })
  })
})

describe('aliases and request ids', () => {
  it('normalises snake_case aliases and refuses two spellings that differ', () => {
    expect(normaliseAliases({ request_id: 'req-00000001', ttl_seconds: 60 })).toEqual({ requestId: 'req-00000001', ttlSeconds: 60 })
    expect(normaliseAliases({ request_id: 'req-00000001', requestId: 'req-00000001' })).toEqual({ requestId: 'req-00000001' })
    expect(codeOf(() => normaliseAliases({ request_id: 'req-00000001', requestId: 'req-00000002' }))).toBe('conflicting_fields')
    expect(codeOf(() => normaliseAliases({ ttl_seconds: 60, ttlSeconds: 61 }))).toBe('conflicting_fields')
  })

  it('takes the id from the body or the header, which must agree, and checks its form', () => {
    expect(resolveRequestId('req-00000001', undefined)).toBe('req-00000001')
    expect(resolveRequestId(undefined, 'req-00000001')).toBe('req-00000001')
    expect(resolveRequestId('req-00000001', 'req-00000001')).toBe('req-00000001')
    expect(codeOf(() => resolveRequestId('req-00000001', 'req-00000002'))).toBe('conflicting_fields')
    expect(codeOf(() => resolveRequestId(undefined, undefined))).toBe('invalid_request')
    expect(codeOf(() => resolveRequestId(undefined, 'short'))).toBe('invalid_request')
    expect(codeOf(() => resolveRequestId(undefined, 'has space in it'))).toBe('invalid_request')
    expect(codeOf(() => resolveRequestId(undefined, ['req-00000001', 'req-00000001']))).toBe('conflicting_fields')
  })

  it('hashes operation, campaign and body, not the request id nor key order', () => {
    const a = paramsHash('intervene', 'c1', { requestId: 'req-00000001', intervention: { x: 1, y: 2 } })
    expect(paramsHash('intervene', 'c1', { intervention: { y: 2, x: 1 }, requestId: 'req-00000002' })).toBe(a)
    expect(paramsHash('intervene', 'c2', { requestId: 'req-00000001', intervention: { x: 1, y: 2 } })).not.toBe(a)
    expect(paramsHash('submit', 'c1', { requestId: 'req-00000001', intervention: { x: 1, y: 2 } })).not.toBe(a)
    expect(paramsHash('intervene', 'c1', { requestId: 'req-00000001', intervention: { x: 1, y: 3 } })).not.toBe(a)
  })
})

describe('outcome classes', () => {
  const err = (code: number, data?: unknown) => ({ ok: false as const, error: { code, message: 'remote text', data }, httpStatus: 200 })

  it('a valid result is a result; the shape is judged by the operation', () => {
    expect(classifyAnswer({ ok: true, result: { accepted: true }, httpStatus: 200 }).cls).toBe('result')
  })

  it('a known reason rejects, and beats the code', () => {
    expect(classifyAnswer(err(-32603, { reason: 'stale_epoch' }))).toMatchObject({ cls: 'rejected', code: 'stale_epoch', leaseRefused: true })
    expect(classifyAnswer(err(-32000, { reason: 'lease_held' }))).toMatchObject({ cls: 'rejected', code: 'lease_held_by_other' })
    expect(classifyAnswer(err(-32000, { reason: 'lease_expired' }))).toMatchObject({ cls: 'rejected', code: 'lease_expired' })
    expect(classifyAnswer(err(-32000, { reason: 'policy_violation' }))).toMatchObject({ cls: 'rejected', code: 'policy_rejected', leaseRefused: false })
  })

  it('an unknown reason is ambiguous even with a rejecting code', () => {
    expect(classifyAnswer(err(-32602, { reason: 'half_applied' })).cls).toBe('ambiguous')
  })

  it('the rejecting codes map to their REST codes; -32603 and others are ambiguous', () => {
    expect(classifyAnswer(err(-32001))).toMatchObject({ cls: 'rejected', code: 'not_found' })
    expect(classifyAnswer(err(-32002))).toMatchObject({ cls: 'rejected', code: 'task_not_cancelable' })
    expect(classifyAnswer(err(-32601))).toMatchObject({ cls: 'rejected', code: 'capability_unavailable', methodNotFound: true })
    for (const c of [-32700, -32600, -32602, -32004, -32005]) expect(classifyAnswer(err(c))).toMatchObject({ cls: 'rejected', code: 'upstream_rejected' })
    for (const c of [-32603, -32000, -32003, 1, 500]) expect(classifyAnswer(err(c)).cls).toBe('ambiguous')
  })

  it('only a failure before the connection was up is a rejection', () => {
    expect(classifyFailure(new UpstreamCallError('unreachable', { nothingSent: true }))).toMatchObject({ cls: 'rejected', code: 'upstream_unavailable' })
    for (const kind of ['timeout', 'network', 'redirect', 'too_large', 'http_status', 'invalid'] as const) {
      expect(classifyFailure(new UpstreamCallError(kind)).cls, kind).toBe('ambiguous')
    }
    expect(classifyFailure(new Error('anything else')).cls).toBe('ambiguous')
  })
})

describe('leases on the wire', () => {
  it('accepts {lease}, {lease: null} and a bare lease; nothing else', () => {
    const wire = { controller_id: 'c', epoch: 3, expires_at: 1_900_000_000 }
    expect(parseLeaseResult({ lease: wire })).toEqual({ lease: { controllerId: 'c', epoch: 3, expiresAt: 1_900_000_000 } })
    expect(parseLeaseResult(wire)).toEqual({ lease: { controllerId: 'c', epoch: 3, expiresAt: 1_900_000_000 } })
    expect(parseLeaseResult({ lease: null })).toEqual({ lease: null })
    expect(parseLeaseResult({ lease: { ...wire, epoch: 1.5 } })).toBeUndefined()
    expect(parseLeaseResult({ lease: { ...wire, expires_at: '2030-01-01' } })).toBeUndefined()
    expect(parseLeaseResult({})).toBeUndefined()
    expect(parseLeaseResult(null)).toBeUndefined()
  })
})
