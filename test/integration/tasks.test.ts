// GET /v1/tasks/:taskId (docs/design.md#task-projection): the projection, its bounds, and inert
// file URIs.
import http from 'node:http'
import { afterEach, describe, expect } from 'vitest'
import { it, test } from '../helpers/fixtures.js'
import type { TestGateway } from '../helpers/gateway.js'
import { call } from '../helpers/http.js'

const closers: Array<() => Promise<unknown>> = []
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!()
})
test.override({ pairOptions: { sim: { secret: 'tasks-secret-123456', profile: 'fasta2a' } } })
const getTask = async (g: TestGateway, id: string) => await call(`${g.url}/v1/tasks/${encodeURIComponent(id)}`, { token: g.tokens.reader })

function task (id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, contextId: `ctx-${id}`, kind: 'task', status: { state: 'working', timestamp: '2026-11-29T12:00:00' }, ...extra }
}

describe('task projection', () => {
  it('projects the seeded campaign task and drops history, metrics and stdout', async ({ sim: s, gw: g }) => {
    const res = await getTask(g, 'task-demo-1')
    expect(res.status).toBe(200)
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the seeded task is indexed freely
    const seeded = s.getTask('task-demo-1') as any
    const sup = seeded.metadata.argus_supervisor
    expect(res.body).toEqual({
      taskId: 'task-demo-1',
      contextId: seeded.contextId,
      state: 'completed',
      outcomeScope: 'attempt',
      supervisor: {
        revision: sup.revision,
        stage: sup.stage,
        runId: sup.run_id,
        attemptId: sup.attempt_id,
        sourceSha: sup.source_sha,
        evidenceRevision: sup.evidence_revision,
        evidenceRef: sup.evidence_ref,
        blocked: sup.blocked
      },
      artifacts: [
        { artifactId: seeded.artifacts[0].artifactId, name: seeded.artifacts[0].name, parts: seeded.artifacts[0].parts },
        {
          artifactId: seeded.artifacts[1].artifactId,
          name: seeded.artifacts[1].name,
          parts: [{ kind: 'file', file: { ...seeded.artifacts[1].parts[0].file, followed: false } }]
        }
      ],
      artifactsTruncated: false
    })
    for (const dropped of ['history', 'metrics', 'stdout', 'loss']) expect(res.text).not.toContain(dropped)
    const get = s.rpcCalls().find((c) => c.method === 'tasks/get')!
    expect(get.params).toEqual({ id: 'task-demo-1', historyLength: 0 })
  })

  it('never requests a file URI, even one pointing at a live local server', async ({ startPair }) => {
    let hits = 0
    const bait = http.createServer((_req, res) => { hits += 1; res.end('{}') })
    await new Promise<void>((r) => bait.listen(0, '127.0.0.1', r))
    closers.push(() => new Promise((r) => bait.close(r)))
    const uri = `http://127.0.0.1:${(bait.address() as { port: number }).port}/report.json`
    const { sim: s, gw: g } = await startPair()
    s.addTask(task('t-file', { status: { state: 'completed' }, artifacts: [{ artifactId: 'a', name: 'report', parts: [{ kind: 'file', file: { name: 'r.json', mimeType: 'application/json', uri } }] }] }))
    const res = await getTask(g, 't-file')
    expect(res.body.artifacts[0].parts[0]).toEqual({ kind: 'file', file: { name: 'r.json', mimeType: 'application/json', uri, followed: false } })
    await new Promise((r) => setTimeout(r, 100))
    expect(hits).toBe(0)
    expect(s.received.filter((r) => r.path.startsWith('/artifacts/'))).toHaveLength(0)
  })

  it('accepts a 6 MiB history under the task cap (above the 4 MiB general cap) and drops it', async ({ sim: s, gw: g }) => {
    const chunk = 'h'.repeat(64 * 1024)
    const history = Array.from({ length: 96 }, (_, i) => ({ kind: 'message', role: 'agent', messageId: `m${i}`, parts: [{ kind: 'text', text: chunk }] }))
    s.addTask(task('t-big', { history }))
    const res = await getTask(g, 't-big')
    expect(res.status).toBe(200)
    expect(res.body.state).toBe('working')
    expect(res.text.length).toBeLessThan(2000)
  })

  it('refuses a task over UPSTREAM_MAX_TASK_RESPONSE_BYTES', async ({ startPair }) => {
    const { sim: s, gw: g } = await startPair({ env: { UPSTREAM_MAX_TASK_RESPONSE_BYTES: String(1024 * 1024) } })
    s.addTask(task('t-huge', { history: [{ kind: 'message', role: 'agent', messageId: 'm', parts: [{ kind: 'text', text: 'x'.repeat(2 * 1024 * 1024) }] }] }))
    const res = await getTask(g, 't-huge')
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('upstream_invalid_response')
  })

  it('keeps at most 32 artifacts and flags the truncation', async ({ sim: s, gw: g }) => {
    const artifacts = Array.from({ length: 40 }, (_, i) => ({ artifactId: `a${i}`, name: `n${i}`, parts: [{ kind: 'data', data: { i } }] }))
    s.addTask(task('t-many', { artifacts }))
    const res = await getTask(g, 't-many')
    expect(res.body.artifacts).toHaveLength(32)
    expect(res.body.artifacts[31].artifactId).toBe('a31')
    expect(res.body.artifactsTruncated).toBe(true)
  })

  it('keeps at most 64 KiB of artifact content (UTF-8 bytes) and flags the truncation', async ({ sim: s, gw: g }) => {
    const text = 'é'.repeat(10 * 1024) // 20 KiB of UTF-8 in 10 Ki characters
    const artifacts = Array.from({ length: 4 }, (_, i) => ({ artifactId: `a${i}`, parts: [{ kind: 'text', text, metadata: { dropped: true } }] }))
    s.addTask(task('t-wide', { artifacts }))
    const res = await getTask(g, 't-wide')
    expect(res.body.artifacts).toHaveLength(3)
    expect(res.body.artifacts[0]).toEqual({ artifactId: 'a0', name: null, parts: [{ kind: 'text', text }] })
    expect(res.body.artifactsTruncated).toBe(true)
  })

  it('state is always one of the A2A states the document lists: v0.3\'s names, a v1.0 remote\'s translated, any other name unknown', async ({ sim: s, gw: g, startPair }) => {
    const states = ['submitted', 'working', 'input-required', 'completed', 'canceled', 'failed', 'rejected', 'auth-required', 'unknown']
    for (const [i, state] of [...states, 'paused', 'TASK_STATE_WORKING', 'Completed', ''].entries()) {
      s.addTask(task(`t-state-${i}`, { status: { state } }))
      const res = await getTask(g, `t-state-${i}`)
      expect(res.status, state).toBe(200)
      expect(res.body.state, state).toBe(states.includes(state) ? state : 'unknown')
    }
    // the document says the same: one enum, its values these
    expect((await call(`${g.url}/openapi.json`)).body.components.schemas.TaskState.enum).toEqual(states)
    const v1 = await startPair({ sim: { protocol: 'v1.0' } })
    for (const state of states) {
      v1.sim.addTask(task(`t-v1-${state}`, { status: { state } }))
      // served as TASK_STATE_INPUT_REQUIRED and the like (unknown as TASK_STATE_UNSPECIFIED), read back as v0.3's name
      expect((await getTask(v1.gw, `t-v1-${state}`)).body.state, state).toBe(state)
    }
  })

  it('supervisor is null without argus_supervisor metadata', async ({ sim: s, gw: g }) => {
    s.addTask(task('t-plain', { metadata: { metrics: { loss: 1 } } }))
    expect((await getTask(g, 't-plain')).body.supervisor).toBeNull()
  })

  it('a missing task (-32001) is 404 not_found', async ({ startPair }) => {
    for (const profile of ['fasta2a', 'a2a-js'] as const) {
      const { sim, gw: g } = await startPair({ sim: { profile } })
      const res = await getTask(g, 'does-not-exist')
      expect(res.status).toBe(404)
      expect(res.body.error.code).toBe('not_found')
      await g.close(); await sim.close()
    }
  })

  it('a malformed task id is 400 before any upstream call', async ({ sim: s, gw: g }) => {
    const res = await getTask(g, 'bad id/../x')
    expect(res.status).toBe(400)
    expect(s.rpcCalls()).toHaveLength(0)
  })
})
