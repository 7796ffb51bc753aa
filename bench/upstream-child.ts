// The upstream of the comparison bench: a minimal node:http responder, in a process of its own,
// with fixed replies — the OpenOperator agent card, `tasks/get` (a completed task with one
// artifact, supervisor metadata and a short history, as real servers send despite
// historyLength 0) and the Argus `message/send` (a message with one data part). Only the ids
// are spliced in: the JSON-RPC id, and the task id that the gateway checks against its request.
// It counts calls by method; nothing else, so every row measures what sits in front of it.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serveParent } from './child-ipc.js'

const card = JSON.stringify({
  name: 'OpenOperator',
  description: 'bench upstream',
  version: '1.0.0',
  url: 'http://127.0.0.1/a2a/',
  preferredTransport: 'JSONRPC',
  protocolVersion: '0.3',
  capabilities: { streaming: false, pushNotifications: false },
  defaultInputModes: ['application/json'],
  defaultOutputModes: ['application/json'],
  skills: ['argus_supervisor_health', 'argus_supervisor_status', 'argus_campaign_list'].map((id) => ({ id, name: id, description: id, tags: ['argus'] }))
})

const taskRest = JSON.stringify({
  contextId: 'ctx-bench',
  status: { state: 'completed', timestamp: '2025-01-01T00:00:00Z' },
  artifacts: [{ artifactId: 'art-1', name: 'report', parts: [{ kind: 'data', data: { loss: 0.125, step: 4200, accepted: null } }, { kind: 'text', text: 'attempt finished' }] }],
  metadata: { argus_supervisor: { revision: 7, stage: 'train', run_id: 'run-1', attempt_id: 'att-3', source_sha: 'a'.repeat(40), evidence_revision: 2, evidence_ref: 'ev-2', blocked: false } },
  history: [
    { role: 'user', kind: 'message', messageId: 'm-1', parts: [{ kind: 'text', text: 'start the attempt' }] },
    { role: 'agent', kind: 'message', messageId: 'm-2', parts: [{ kind: 'text', text: 'attempt started' }] }
  ]
}).slice(1)
const health = JSON.stringify({ kind: 'message', role: 'agent', messageId: 'm-health', parts: [{ kind: 'data', data: { status: 'ok', supervisor: 'enabled', campaigns: 3 } }] })

const calls: Record<string, number> = {}
const server = createServer((req, res) => {
  if (req.method === 'GET') {
    if (req.url?.endsWith('/.well-known/agent-card.json') === true) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(card) }).end(card)
    } else {
      res.writeHead(404).end()
    }
    return
  }
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    const rpc = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; method: string; params?: { id?: string } }
    calls[rpc.method] = (calls[rpc.method] ?? 0) + 1
    let result: string
    if (rpc.method === 'tasks/get') result = `{"kind":"task","id":${JSON.stringify(rpc.params?.id ?? '')},${taskRest}`
    else if (rpc.method === 'message/send') result = health
    else result = 'null'
    const body = `{"jsonrpc":"2.0","id":${JSON.stringify(rpc.id)},"result":${result}}`
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo
  serveParent(`http://127.0.0.1:${port}`, async () => { server.closeAllConnections(); server.close() }, () => ({ ...calls }))
})
