// The gateway's A2A front door with @a2a-js/sdk 1.3's client: an Argus read, then a short
// campaign — claim the lease, submit work, poll the task, cancel it, release the lease. What the
// SDK's types do not tell you about this gateway is marked NOTE. The reference is
// docs/api.md#a2a-front-door in the gateway's repository.
//
//   GATEWAY_URL=https://gateway.example GATEWAY_TOKEN=… CAMPAIGN_ID=camp-2026-q4 npx tsx clients/a2a-example/campaign.ts
//
// The token is a gateway caller's with the `control` scope (`read` is enough for the Argus read).
// Prints a line per step; exits 0 at the end, 1 on a refusal (JSON-RPC code and the gateway's
// message printed).
import { randomUUID } from 'node:crypto'
import { Role, TaskState, type Message, type Part, type Task } from '@a2a-js/sdk'
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client'

const env = (name: string): string => {
  const v = process.env[name]
  if (v === undefined || v === '') throw new Error(`set ${name}`)
  return v
}
const gatewayUrl = env('GATEWAY_URL')
const token = env('GATEWAY_TOKEN')
const campaignId = env('CAMPAIGN_ID')
const ARGUS = 'urn:openoperator:argus-supervisor:v1'

// NOTE: the SDK has no token option. Give it a fetch that adds your bearer token, and give that
// fetch to both the card resolver and the JSON-RPC transport: the transport's calls need it.
const authedFetch: typeof fetch = async (input, init) => {
  const headers = new Headers(init?.headers)
  headers.set('authorization', `Bearer ${token}`)
  return await fetch(input, { ...init, headers })
}

// the SDK's message and part shapes are A2A 1.0's protobuf ones: every field present
const dataPart = (value: unknown): Part => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: '' })
const textPart = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: '' })
const userMessage = (messageId: string, parts: Part[], metadata: Record<string, unknown>, extensions: string[] = []): Message =>
  ({ messageId, contextId: '', taskId: '', role: Role.ROLE_USER, parts, metadata, extensions, referenceTaskIds: [] })
const stateOf = (t: Task): string => TaskState[t.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED]
const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))

async function main (): Promise<void> {
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: authedFetch })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: authedFetch })
  }))
  // the card is at /a2a/.well-known/agent-card.json; the empty path says "this URL as it is"
  const client = await factory.createFromUrl(`${gatewayUrl}/a2a/.well-known/agent-card.json`, '')
  const card = await client.getAgentCard()
  console.log(`connected to ${card.name} ${card.version} over A2A ${client.protocolVersion}`)

  // NOTE: the campaign methods (claim, renew, release, intervene) are the gateway's extension;
  // the SDK has no method for them. They are plain JSON-RPC to the endpoint the card names.
  const endpoint = card.supportedInterfaces.find((i) => i.protocolBinding === 'JSONRPC' && i.protocolVersion === '1.0')?.url
  if (endpoint === undefined) throw new Error('the card names no A2A 1.0 JSON-RPC endpoint')
  const campaignCall = async (method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const res = await authedFetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params })
    })
    const body = await res.json() as { result?: Record<string, unknown>; error?: { code: number; message: string } }
    if (body.error !== undefined) throw new Error(`${method}: ${body.error.code} ${body.error.message}`)
    return body.result ?? {}
  }

  // An Argus read: a message naming the Argus extension, the operation in its metadata.
  // NOTE: the gateway sends the remote an id of its own for every read (a `requestId` you put in
  // the envelope is not used); the answer names it — quote that one to an operator.
  const readId = `read-${randomUUID()}`
  const reply = await client.sendMessage({
    tenant: '',
    message: userMessage(readId, [dataPart({ params: {} })], { [ARGUS]: { operation: 'supervisor.health' } }, [ARGUS]),
    configuration: undefined,
    metadata: undefined
  }) as Message
  const health = reply.parts[0]?.content?.$case === 'data' ? reply.parts[0].content.value as { ok?: boolean } : {}
  console.log(`supervisor.health: ok ${String(health.ok)}; the gateway read it as ${String(reply.metadata?.[ARGUS]?.requestId)}, not as ${readId}`)

  // Every mutation carries a request id you make and keep: sent again after a lost answer, the
  // gateway replays the first outcome and never sends it to the remote twice.
  const claimed = await campaignCall('campaign/claim_control', { campaign_id: campaignId, request_id: `claim-${randomUUID()}`, ttl_seconds: 600 })
  const lease = claimed.lease as { epoch: number; expires_at: number }
  console.log(`claimed ${campaignId}: epoch ${lease.epoch}, until ${new Date(lease.expires_at * 1000).toISOString()}`)
  try {
    // A submission: the message id is its request id.
    // NOTE: argus_supervisor goes in the *message's* metadata, not the request's; and the send
    // must not wait for the work (returnImmediately: true).
    const submitId = `submit-${randomUUID()}`
    let task = await client.sendMessage({
      tenant: '',
      message: userMessage(submitId, [textPart('Train the baseline on the 2026-11 split.')], { argus_supervisor: { campaign_id: campaignId } }),
      configuration: { acceptedOutputModes: ['application/json'], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined
    }) as Task
    console.log(`submitted ${submitId}: task ${task.id}, ${stateOf(task)}`)

    // poll until the task has started (a real program polls until it ends, renewing the lease)
    for (let delay = 200; task.status?.state === TaskState.TASK_STATE_SUBMITTED && delay < 10_000; delay *= 2) {
      await sleep(delay)
      task = await client.getTask({ tenant: '', id: task.id, historyLength: 0 })
    }
    console.log(`task ${task.id}: ${stateOf(task)}`)

    // NOTE: a cancel is a mutation too: its request id goes in the *request's* metadata.
    const canceled = await client.cancelTask({ tenant: '', id: task.id, metadata: { argus_supervisor: { request_id: `cancel-${randomUUID()}` } } })
    console.log(`canceled task ${canceled.id}: ${stateOf(canceled)}`)
  } finally {
    await campaignCall('campaign/release_control', { campaign_id: campaignId, request_id: `release-${randomUUID()}` })
    console.log(`released ${campaignId}`)
  }
}

main().catch((err: unknown) => {
  // a JSON-RPC error from the SDK (TaskNotFoundError, …) or from campaignCall: the gateway's own words
  console.error(String(err))
  process.exitCode = 1
})
