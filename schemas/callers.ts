// Inbound callers (docs/design.md#callers): who may call the gateway, with which scopes.
import { z } from 'zod'

const isObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v)

export const ScopeSchema = z.enum(['read', 'control', 'admin'])
export type Scope = z.infer<typeof ScopeSchema>

/**
 * the prefix of every JWT caller's name (src/jwt-callers.ts): a static caller may not use it, in
 * any letter case — `JWT:ops` would read as a JWT caller's name in a log or the ledger
 */
export const JWT_NAME_PREFIX = 'jwt:'
const hasJwtPrefix = (name: string): boolean => name.slice(0, JWT_NAME_PREFIX.length).toLowerCase() === JWT_NAME_PREFIX

export const CallerSchema = z.strictObject({
  name: z.string().min(1).max(128).refine((n) => !hasJwtPrefix(n), `must not start with "${JWT_NAME_PREFIX}" (reserved for callers from the identity provider)`),
  tokenSha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters').transform((s) => s.toLowerCase()),
  scopes: z.array(ScopeSchema).min(1),
  controllerId: z.string().min(1).max(128).optional(),
  // ISO 8601 with an offset (e.g. 2027-01-31T00:00:00Z); kept as ms since the epoch
  expiresAt: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time with an offset, e.g. 2027-01-31T00:00:00Z' }).transform((s) => Date.parse(s)).optional()
}).refine((c) => !c.scopes.includes('control') || c.controllerId !== undefined, {
  message: 'required for a caller with the control scope',
  path: ['controllerId'],
  // judged whenever scopes and controllerId are themselves fine, so a bad digest does not hide it
  when: (p) => isObject(p.value) && p.issues.every((i) => i.path?.[0] !== 'scopes' && i.path?.[0] !== 'controllerId')
})
export type Caller = z.infer<typeof CallerSchema>

export const CallersSchema = z.array(CallerSchema).min(1).superRefine((callers, ctx) => {
  const names = new Set<string>()
  const controllers = new Set<string>()
  const digests = new Set<string>()
  callers.forEach((c, i) => {
    if (names.has(c.name)) ctx.addIssue({ code: 'custom', message: `duplicate caller name "${c.name}"`, path: [i, 'name'] })
    if (digests.has(c.tokenSha256)) ctx.addIssue({ code: 'custom', message: 'two callers share one token digest', path: [i, 'tokenSha256'] })
    if (c.controllerId !== undefined && c.scopes.includes('control')) {
      if (controllers.has(c.controllerId)) ctx.addIssue({ code: 'custom', message: `controllerId "${c.controllerId}" is not unique`, path: [i, 'controllerId'] })
      controllers.add(c.controllerId)
    }
    names.add(c.name)
    digests.add(c.tokenSha256)
  })
})
