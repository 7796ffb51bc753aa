// The seed's exact Argus envelope (docs/design.md#argus-reads): one message/send per read, blocking
// requested (FastA2A ignores it), camelCase A2A keys, the extension URN in the message, in
// its metadata and in the X-A2A-Extensions header.

export const ARGUS_EXTENSION_URN = 'urn:openoperator:argus-supervisor:v1'

export const ARGUS_OPERATIONS = ['supervisor.health', 'supervisor.status', 'campaign.list'] as const
export type ArgusOperation = typeof ARGUS_OPERATIONS[number]

export const ARGUS_CODES = ['invalid_argus_envelope', 'argus_supervisor_disabled', 'unsupported_argus_operation', 'argus_supervisor_unavailable'] as const
export type ArgusCode = typeof ARGUS_CODES[number]

export function buildArgusParams (operation: ArgusOperation, requestId: string): Record<string, unknown> {
  return {
    configuration: { blocking: true, acceptedOutputModes: ['application/json'] },
    message: {
      role: 'user',
      kind: 'message',
      messageId: requestId,
      extensions: [ARGUS_EXTENSION_URN],
      metadata: { [ARGUS_EXTENSION_URN]: { operation, requestId } },
      parts: [{ kind: 'data', data: { params: {} } }]
    }
  }
}

export const ARGUS_HEADERS = { 'x-a2a-extensions': ARGUS_EXTENSION_URN } as const
