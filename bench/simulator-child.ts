// The simulator for bench/mutations.ts, in a process of its own (forked with the tsx loader), so
// the remote's CPU does not share the gateway's event loop. It talks to its parent over IPC only:
// it sends { url } once listening, answers { type: 'stats', campaigns } with what the remote
// received and applied, and closes on { type: 'close' } or when the parent goes away.
import { startSimulator } from '../src/simulator/index.js'

export type ChildRequest = { type: 'stats'; campaigns: string[] } | { type: 'close' }
export type ChildMessage =
  | { type: 'ready'; url: string }
  | { type: 'stats'; requestCounts: Array<[string, number]>; interventions: Array<[string, string[]]>; rpcCalls: number; rssBytes: number }
  | { type: 'closed' }

const secret = process.env.BENCH_SIM_SECRET
if (process.send === undefined || secret === undefined) {
  console.error('bench/simulator-child.ts is forked by bench/mutations.ts (IPC and BENCH_SIM_SECRET required)')
  process.exit(2)
}
const send = (m: ChildMessage): void => { process.send?.(m) }

const sim = await startSimulator({ profile: 'campaign-control', secret, host: '127.0.0.1', port: 0 })
let closing = false
const close = async (): Promise<void> => {
  if (closing) return
  closing = true
  await sim.close()
  if (process.connected) {
    send({ type: 'closed' })
    process.disconnect()
  }
}

process.on('message', (m: ChildRequest) => {
  if (m.type === 'stats') {
    send({
      type: 'stats',
      requestCounts: [...sim.control.requestCounts()],
      interventions: m.campaigns.map((c) => [c, sim.control.interventions(c).map((r) => r.requestId)]),
      rpcCalls: sim.rpcCalls().length,
      rssBytes: process.memoryUsage().rss
    })
  } else if (m.type === 'close') {
    void close()
  }
})
// the parent exited or crashed: never outlive it
process.on('disconnect', () => { void close() })
send({ type: 'ready', url: sim.url })
