// The simulator (openoperator profile) in a process of its own, for the comparison bench's sanity
// row: the gateway against the remote the tests use, never a baseline.
import { startSimulator } from '../src/simulator/index.js'
import { serveParent } from './child-ipc.js'

const secret = process.env.BENCH_SIM_SECRET
if (secret === undefined) throw new Error('BENCH_SIM_SECRET is required')
const sim = await startSimulator({ profile: 'openoperator', secret, host: '127.0.0.1', port: 0 })
serveParent(sim.url, async () => { await sim.close() }, () => {
  const calls: Record<string, number> = {}
  for (const c of sim.rpcCalls()) calls[c.method] = (calls[c.method] ?? 0) + 1
  return calls
})
