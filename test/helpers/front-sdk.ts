// An unmodified @a2a-js/sdk 1.3.0 client pointed at a gateway's front door (docs/api.md#a2a-front-door),
// and the messages the tests send through it: shared by test/front/sdk-client.test.ts (the simulator
// as the remote) and test/interop/front-door-sdk.test.ts (the SDK server as the remote).
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client'
import { rid } from './control.js'
import type { TestGateway } from './gateway.js'

export const URN = 'urn:openoperator:argus-supervisor:v1'

/** fetch with the caller's bearer token: how an SDK user authenticates */
export const authed = (token: string): typeof fetch => async (input, init) => {
  const headers = new Headers(init?.headers)
  headers.set('authorization', `Bearer ${token}`)
  return await fetch(input, { ...init, headers })
}

/** the SDK's v1.0 JSON-RPC client, built from the gateway's card */
export async function sdkClient (g: TestGateway, token: string): Promise<Client> {
  const fetchImpl = authed(token)
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl })
  }))
  return await factory.createFromUrl(`${g.url}/a2a/.well-known/agent-card.json`, '')
}

export const dataPart = (value: Record<string, unknown>) => ({ content: { $case: 'data' as const, value }, metadata: undefined, filename: '', mediaType: '' })
export const textPart = (value: string) => ({ content: { $case: 'text' as const, value }, metadata: undefined, filename: '', mediaType: '' })
export const message = (messageId: string, parts: unknown[], metadata: Record<string, unknown>, extensions: string[] = []) =>
  ({ messageId, contextId: '', taskId: '', role: 1, parts, metadata, extensions, referenceTaskIds: [] }) as never

/** one Argus read as the SDK sends it: the extension named, its envelope in the metadata */
export const argusRead = (operation: string, id = rid('read')) =>
  ({ tenant: '', message: message(id, [dataPart({ params: {} })], { [URN]: { operation, requestId: id } }, [URN]), configuration: undefined, metadata: undefined })
