// A campaign-control submission completing on time (`completeAfterMs`, SIMULATOR_TASK_SECONDS;
// docs/design.md#simulator-faults): working until then, `completed` with a result artifact after,
// whether polled or not; a cancel first wins; without the option the task stays working, as
// before; closing the simulator clears the timers.
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { startSimulator } from '../../src/simulator/index.js'
import { claim, control, mutationParams, submitParams } from './control-helpers.js'
import { rpc, useSimulator } from './helpers.js'

const start = useSimulator()

async function submit (s: Awaited<ReturnType<typeof start>>): Promise<string> {
  const lease = await claim(s)
  const answer = await control(s, 'message/send', submitParams(lease.epoch))
  expect(answer.json.result.status.state).toBe('submitted')
  return answer.json.result.id as string
}

const stateOf = async (s: Awaited<ReturnType<typeof start>>, id: string): Promise<string> =>
  (await rpc(s, 'tasks/get', { id, historyLength: 0 })).json.result.status.state as string

describe('a submitted task completes on time', () => {
  it('working until completeAfterMs, then completed with a result artifact and its supervisor metadata', async () => {
    const s = await start({ profile: 'campaign-control', campaignControl: { completeAfterMs: 400 } })
    const id = await submit(s)
    expect(await stateOf(s, id)).toBe('working')
    expect(await stateOf(s, id)).toBe('working')
    await expect.poll(() => stateOf(s, id), { timeout: 3000, interval: 50 }).toBe('completed')
    const task = (await rpc(s, 'tasks/get', { id })).json.result
    expect(task.artifacts).toEqual([{ artifactId: expect.any(String), name: 'result', parts: [{ kind: 'data', data: { status: 'ok' } }] }])
    expect(task.metadata.argus_supervisor.campaign_id).toBe('camp-1')
  })

  it('without polling too: the remote\'s worker does not wait for a client', async () => {
    const s = await start({ profile: 'campaign-control', campaignControl: { completeAfterMs: 150 } })
    const id = await submit(s)
    await sleep(400)
    expect(s.getTask(id)?.status).toMatchObject({ state: 'completed' })
  })

  it('a cancel before then wins: the task stays canceled', async () => {
    const s = await start({ profile: 'campaign-control', campaignControl: { completeAfterMs: 300 } })
    const id = await submit(s)
    const lease = s.control.lease('camp-1')!
    const params = { id, metadata: { argus_supervisor: mutationParams(lease.epoch) } }
    expect((await control(s, 'tasks/cancel', params)).json.result.status.state).toBe('canceled')
    await sleep(500)
    expect(await stateOf(s, id)).toBe('canceled')
  })

  it('off by default: the task stays in its last scripted state, as before', async () => {
    const s = await start({ profile: 'campaign-control' })
    const id = await submit(s)
    await sleep(300)
    for (let i = 0; i < 3; i++) expect(await stateOf(s, id)).toBe('working')
  })

  it('close clears the pending timers: nothing runs against a closed simulator, nothing holds the process', async () => {
    const s = await startSimulator({ profile: 'campaign-control', campaignControl: { completeAfterMs: 200 } })
    const id = await submit(s)
    await s.close()
    await sleep(350)
    expect(s.getTask(id)?.status).toMatchObject({ state: 'submitted' })
  })

  it('refuses a completeAfterMs that is not a positive whole number of ms', async () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      await expect(startSimulator({ profile: 'campaign-control', campaignControl: { completeAfterMs: bad } }), String(bad)).rejects.toThrow('campaignControl.completeAfterMs must be a positive whole number of ms')
    }
  })
})
