// The agent card as the gateway reads it (docs/design.md#discovery-and-capabilities): a JSON
// object with a string `name` and an array `skills`; everything else is optional and read
// defensively.
import { z } from 'zod'

export const CONTROL_EXTENSION_URN = 'urn:openoperator:campaign-control:v1'

export const AgentCardSchema = z.looseObject({
  name: z.string(),
  skills: z.array(z.unknown()),
  url: z.unknown().optional(),
  version: z.unknown().optional(),
  protocolVersion: z.unknown().optional(),
  capabilities: z.unknown().optional()
})
export type AgentCard = z.infer<typeof AgentCardSchema>

const SkillSchema = z.looseObject({ id: z.string().min(1) })
const ExtensionSchema = z.looseObject({ uri: z.string(), params: z.record(z.string(), z.unknown()).optional() })
const CapabilitiesSchema = z.looseObject({ extensions: z.array(z.unknown()).optional() })

/** skill ids: identity is the id, never the display name */
export function skillIds (card: AgentCard): Set<string> {
  const ids = new Set<string>()
  for (const s of card.skills) {
    const p = SkillSchema.safeParse(s)
    if (p.success) ids.add(p.data.id)
  }
  return ids
}

/** the campaign-control extension's params, or undefined when not advertised */
export function controlExtensionParams (card: AgentCard): Record<string, unknown> | undefined {
  const caps = CapabilitiesSchema.safeParse(card.capabilities)
  if (!caps.success) return undefined
  for (const e of caps.data.extensions ?? []) {
    const p = ExtensionSchema.safeParse(e)
    if (p.success && p.data.uri === CONTROL_EXTENSION_URN) return p.data.params ?? {}
  }
  return undefined
}
