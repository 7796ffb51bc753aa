// A real A2A server built with @a2a-js/sdk 1.3.0 (Express), for interop tests: v1.0 only, or
// dual (v1.0 with its v0.3 compatibility layer). Its executor answers the Argus envelope as
// OpenOperator's does — a completed task holding one data artifact and
// `metadata.argus_supervisor` — and every JSON-RPC request and card answer is recorded (method,
// A2A-Version, status) so a test can see what went over the wire. The card is served by the
// SDK's own handler from a card the test may change at run time, signed by the SDK's own signer
// when keys are given.
import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import express from 'express'
import { generateAgentCardSignature, type AgentCard } from '@a2a-js/sdk'
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor } from '@a2a-js/sdk/server'
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express'

export type SdkMode = 'v1.0' | 'dual'
const URN = 'urn:openoperator:argus-supervisor:v1'
// TaskState and the Part oneof as the SDK's objects hold them (its JSON is written from these)
const COMPLETED = 3
const FAILED = 4

export interface SdkServerOptions {
  mode: SdkMode
  /** interfaces the served card lists, by version (default: the mode's own) */
  cardVersions?: string[]
  signer?: { privateKey: Parameters<typeof generateAgentCardSignature>[0]; kid: string; alg: string }
}

export interface SdkServer {
  url: string
  /** JSON-RPC requests in order: method, the A2A-Version header sent */
  rpc: Array<{ method: string; version: string | undefined }>
  /** card answers in order: status and the If-None-Match sent */
  cards: Array<{ status: number; ifNoneMatch: string | undefined }>
  /** task ids the executor created */
  tasks: string[]
  setCardVersions: (versions: string[]) => void
  close: () => Promise<void>
}

const PAYLOADS: Record<string, Record<string, unknown>> = {
  'supervisor.health': { status: 'ok', interop: 'a2a-js' },
  'supervisor.status': { campaigns: 1, interop: 'a2a-js' },
  'campaign.list': { campaigns: [{ id: 'camp-1' }], interop: 'a2a-js' }
}

export async function startSdkServer (o: SdkServerOptions): Promise<SdkServer> {
  const rpc: SdkServer['rpc'] = []
  const cards: SdkServer['cards'] = []
  const tasks: string[] = []
  let base = ''
  let versions = o.cardVersions ?? (o.mode === 'dual' ? ['1.0', '0.3'] : ['1.0'])

  const cardFor = (vs: string[]): AgentCard => ({
    name: 'SDK Interop Agent',
    description: 'A real @a2a-js/sdk server for interop checks.',
    version: '0.0.1',
    supportedInterfaces: vs.map((v) => ({ url: base, protocolBinding: 'JSONRPC', protocolVersion: v, tenant: '' })),
    capabilities: { streaming: false, pushNotifications: false, extensions: [] },
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: ['general_assistance', 'argus_supervisor_health', 'argus_supervisor_status', 'argus_campaign_list'].map((id) => ({
      id, name: `Skill ${id}`, description: 'interop', tags: ['interop'], examples: [], inputModes: [], outputModes: [], securityRequirements: []
    })),
    securitySchemes: {},
    securityRequirements: [],
    signatures: [],
    provider: undefined
  })

  const executor: AgentExecutor = {
    async execute (ctx, bus) {
      const meta = ctx.userMessage.metadata?.[URN] as { operation?: string; requestId?: string } | undefined
      const payload = meta?.operation !== undefined ? PAYLOADS[meta.operation] : undefined
      tasks.push(ctx.taskId)
      bus.publish(AgentEvent.task({
        id: ctx.taskId,
        contextId: ctx.contextId,
        status: { state: payload !== undefined ? COMPLETED : FAILED, message: undefined, timestamp: new Date().toISOString() },
        artifacts: [{ artifactId: 'result', name: 'argus', description: '', parts: [{ content: { $case: 'data', value: payload ?? { error: 'unsupported_argus_operation' } }, metadata: undefined, filename: '', mediaType: 'application/json' }], metadata: undefined, extensions: [] }],
        history: [],
        metadata: { argus_supervisor: { revision: 7, stage: 'eval', run_id: 'run-1', attempt_id: 'att-1', source_sha: '0123456789abcdef0123456789abcdef01234567', blocked: false } }
      }))
      bus.finished()
    },
    async cancelTask () {}
  }
  const legacyCompat = o.mode === 'dual' ? { enabled: true } : undefined
  const handler = new DefaultRequestHandler(cardFor(o.mode === 'dual' ? ['1.0', '0.3'] : ['1.0']), new InMemoryTaskStore(), executor)
  const signer = o.signer !== undefined ? generateAgentCardSignature(o.signer.privateKey, { alg: o.signer.alg, kid: o.signer.kid, typ: 'JOSE' }) : undefined

  const app = express()
  app.use('/a2a/.well-known/agent-card.json', (req, res, next) => {
    res.on('finish', () => { cards.push({ status: res.statusCode, ifNoneMatch: req.get('if-none-match') }) })
    next()
  }, agentCardHandler({
    agentCardProvider: async () => signer !== undefined ? await signer(cardFor(versions)) : cardFor(versions),
    legacyCompat
  }))
  app.use('/a2a/', express.json(), (req, _res, next) => {
    const m = (req.body as { method?: unknown } | undefined)?.method
    rpc.push({ method: typeof m === 'string' ? m : '', version: req.get('a2a-version') })
    next()
  }, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat }))

  const server: Server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)) })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  base = `${url}/a2a/`
  return {
    url,
    rpc,
    cards,
    tasks,
    setCardVersions: (vs) => { versions = vs },
    close: async () => {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    }
  }
}
