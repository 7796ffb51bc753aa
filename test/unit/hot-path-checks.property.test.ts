// The hand-written checks of the hot path (docs/design.md#hot-path) answer exactly as the zod
// schemas they stand for, on arbitrary input and on near-valid shapes (fast-check).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { runs } from '../helpers/runs.js'
import { ArtifactSchema, MessageSchema, PartSchema, TaskSchema, isArtifact, isMessage, isPart, isTask } from '../../schemas/a2a.js'
import { RpcResponseSchema, checkRpcResponse } from '../../schemas/jsonrpc.js'
import { NoQuerySchema, TaskParamsSchema, isNoQuery, isTaskParams } from '../../schemas/task.js'
import { MAX_JSON_DEPTH, exceedsDepth as exceedsDepthText, exceedsDepthBytes } from '../../src/upstream/json-depth.js'

const json = fc.jsonValue({ maxDepth: 3 })
const loose = fc.oneof(json, fc.constant(undefined), fc.string(), fc.integer(), fc.double(), fc.constant(null), fc.array(json, { maxLength: 2 }))
/** records whose keys may or may not be present, each value right or wrong */
const shaped = (fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> =>
  fc.record(Object.fromEntries(Object.entries(fields).map(([k, a]) => [k, fc.oneof(a, loose)])), { requiredKeys: [] })

const part = shaped({ kind: fc.constantFrom('text', 'data', 'file'), text: fc.string(), data: json })
const message = shaped({ kind: fc.constant('message'), parts: fc.array(part, { maxLength: 2 }), messageId: fc.string() })
const artifact = shaped({ artifactId: fc.string(), name: fc.string(), parts: fc.array(part, { maxLength: 2 }) })
const task = shaped({
  kind: fc.constant('task'),
  id: fc.string({ maxLength: 3 }),
  contextId: fc.string(),
  status: shaped({ state: fc.constantFrom('completed', 'working'), message }),
  artifacts: fc.array(artifact, { maxLength: 2 }),
  metadata: fc.dictionary(fc.string({ maxLength: 3 }), json, { maxKeys: 2 })
})
const rpc = shaped({
  jsonrpc: fc.constant('2.0'),
  id: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
  result: json,
  error: shaped({ code: fc.oneof(fc.integer(), fc.double(), fc.constant(2 ** 60)), message: fc.string(), data: json })
})

const each = { numRuns: runs(2000) }

describe('hot-path checks equal their schemas', () => {
  it('the task route\'s params and query', () => {
    const id = fc.oneof(fc.stringMatching(/^[A-Za-z0-9._:-]{1,256}$/), fc.string({ maxLength: 300 }), fc.string({ minLength: 255, maxLength: 258, unit: fc.constantFrom('a', '.', ':') }), fc.constant(''))
    const params = fc.oneof(shaped({ taskId: id }), shaped({ taskId: id, other: fc.string() }), fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(id, loose), { maxKeys: 2 }), json)
    fc.assert(fc.property(params, (v) => { expect(isTaskParams(v)).toBe(TaskParamsSchema.safeParse(v).success) }), each)
    const nullProto = fc.dictionary(fc.string({ maxLength: 4 }), fc.string(), { maxKeys: 2 }).map((d) => Object.assign(Object.create(null) as object, d))
    fc.assert(fc.property(fc.oneof(nullProto, json, fc.constant({})), (v) => { expect(isNoQuery(v)).toBe(NoQuerySchema.safeParse(v).success) }), each)
    fc.assert(fc.property(nullProto.map((d) => Object.assign(d, { taskId: 'abc' })), (v) => { expect(isTaskParams(v)).toBe(TaskParamsSchema.safeParse(v).success) }), each)
  })

  it('Part, Message, Artifact, Task', () => {
    fc.assert(fc.property(fc.oneof(part, json), (v) => { expect(isPart(v)).toBe(PartSchema.safeParse(v).success) }), each)
    fc.assert(fc.property(fc.oneof(message, json), (v) => { expect(isMessage(v)).toBe(MessageSchema.safeParse(v).success) }), each)
    fc.assert(fc.property(fc.oneof(artifact, json), (v) => { expect(isArtifact(v)).toBe(ArtifactSchema.safeParse(v).success) }), each)
    fc.assert(fc.property(fc.oneof(task, json), (v) => { expect(isTask(v)).toBe(TaskSchema.safeParse(v).success) }), each)
  })

  it('the JSON-RPC response: same verdict, same success or failure, same fields', () => {
    fc.assert(fc.property(fc.oneof(rpc, json), (v) => {
      const z = RpcResponseSchema.safeParse(v)
      const h = checkRpcResponse(v)
      expect(h !== undefined).toBe(z.success)
      if (z.success) expect(h).toEqual(z.data)
    }), each)
  })
})

/** the definition: true when `value` nests objects or arrays more than `max` levels deep (a walk of the parsed tree) */
function exceedsDepth (value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  if (value === null || typeof value !== 'object') return false
  const stack: Array<{ v: object; d: number }> = [{ v: value, d: 1 }]
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (top.d > max) return true
    const children = Array.isArray(top.v) ? top.v as unknown[] : Object.values(top.v)
    for (const c of children) {
      if (c !== null && typeof c === 'object') stack.push({ v: c, d: top.d + 1 })
    }
  }
  return false
}

describe('the depth bound on the raw answer equals the bound on the parsed answer', () => {
  // nested objects and arrays, strings full of brackets, quotes and backslashes
  const tricky = fc.string({ unit: fc.constantFrom('{', '}', '[', ']', '"', '\\', 'a', ' ', ':', ',', '\u00e9') })
  const deep = fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: 'small', withCrossShrink: true },
      fc.oneof(tricky, fc.integer(), fc.constant(null), fc.boolean()),
      fc.array(tie('node'), { maxLength: 3 }),
      fc.dictionary(tricky, tie('node'), { maxKeys: 3 }))
  })).node
  it('for every value and bound, with or without whitespace', () => {
    const seen = { over: 0, within: 0 }
    // the rarer verdict, over, comes in about 15 % of the cases: from 2000 of them (the fast loop's
    // floor) a count of a tenth is six standard deviations short
    const n = runs(5000, 2000)
    fc.assert(fc.property(fc.oneof(deep, fc.jsonValue()), fc.integer({ min: 0, max: 8 }), fc.boolean(), (v, max, pretty) => {
      const text = JSON.stringify(v, null, pretty ? 2 : undefined) ?? 'null'
      const verdict = exceedsDepth(JSON.parse(text), max)
      seen[verdict ? 'over' : 'within']++
      expect(exceedsDepthBytes(Buffer.from(text, 'utf8'), max)).toBe(verdict)
      expect(exceedsDepthText(text, Buffer.from(text, 'utf8'), max)).toBe(verdict)
    }), { numRuns: n })
    // both verdicts were exercised, many times: each in more than a tenth of the cases
    expect(Math.min(seen.over, seen.within)).toBeGreaterThan(n / 10)
  })
  it('a 100,000-deep answer, without a stack', () => {
    expect(exceedsDepthBytes(Buffer.from('['.repeat(100_000) + ']'.repeat(100_000)))).toBe(true)
    expect(exceedsDepthBytes(Buffer.from(`{"a":"${'['.repeat(1000)}"}`))).toBe(false)
    const deepText = '['.repeat(100_000) + ']'.repeat(100_000)
    expect(exceedsDepthText(deepText, Buffer.from(deepText))).toBe(true)
    // past the count, the loop decides: brackets inside strings do not nest
    const flatText = `{"a":"${'['.repeat(1000)}${'{'.repeat(1000)}"}`
    expect(exceedsDepthText(flatText, Buffer.from(flatText))).toBe(false)
  })
})
