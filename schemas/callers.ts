// Inbound callers (docs/design.md#callers): who may call the gateway, with which scopes.
import { z } from 'zod'

const isObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v)

export const ScopeSchema = z.enum(['read', 'control', 'admin'])
export type Scope = z.infer<typeof ScopeSchema>

/**
 * the prefix of every JWT caller's name (src/callers/jwt.ts): a static caller may not use it, in
 * any letter case — `JWT:ops` would read as a JWT caller's name in a log or the ledger
 */
export const JWT_NAME_PREFIX = 'jwt:'
const hasJwtPrefix = (name: string): boolean => name.slice(0, JWT_NAME_PREFIX.length).toLowerCase() === JWT_NAME_PREFIX

/**
 * A controller id (docs/design.md#controller-bindings): ASCII only, so no two ids look alike
 * (no full-width, zero-width or other look-alike), and ids that differ only in letter case are
 * one id (`controllerKey`).
 */
export const CONTROLLER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/
export const CONTROLLER_ID_RULE = 'must be 1–128 ASCII characters: a letter or digit, then letters, digits, ".", "_", ":" or "-"'
export const ControllerIdSchema = z.string().regex(CONTROLLER_ID_PATTERN, CONTROLLER_ID_RULE)
/** the form two controller ids are compared in: letter case ignored */
export const controllerKey = (controllerId: string): string => controllerId.toLowerCase()

/**
 * What no caller name holds, whatever its source (docs/design.md#callers): control characters
 * (Cc: terminal escapes), format characters (Cf: zero-width and every bidirectional control,
 * U+200E/F, U+202A–E, U+2066–9), lone surrogates and the line and paragraph separators. A name is
 * written to the ledger, logs, the admin's listings and a terminal by the bin.
 */
const UNSAFE_IN_NAME = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u
export const safeName = (name: string): boolean => !UNSAFE_IN_NAME.test(name)
export const NAME_RULE = 'must not hold control, format (zero-width, bidirectional) or line-separator characters'

export const CallerSchema = z.strictObject({
  name: z.string().min(1).max(128)
    .refine((n) => !hasJwtPrefix(n), `must not start with "${JWT_NAME_PREFIX}" (reserved for callers from the identity provider)`)
    .refine(safeName, NAME_RULE),
  tokenSha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters').transform((s) => s.toLowerCase()),
  scopes: z.array(ScopeSchema).min(1),
  controllerId: ControllerIdSchema.optional(),
  // ISO 8601 with an offset (e.g. 2027-01-31T00:00:00Z); kept as ms since the epoch
  expiresAt: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time with an offset, e.g. 2027-01-31T00:00:00Z' }).transform((s) => Date.parse(s)).optional()
}).refine((c) => !c.scopes.includes('control') || c.controllerId !== undefined, {
  message: 'required for a caller with the control scope',
  path: ['controllerId'],
  // judged whenever scopes and controllerId are themselves fine, so a bad digest does not hide it
  when: (p) => isObject(p.value) && p.issues.every((i) => i.path?.[0] !== 'scopes' && i.path?.[0] !== 'controllerId')
})
/**
 * GATEWAY_JWT_CLAIMS (docs/design.md#authentication): which claims of a verified JWT name the
 * caller, hold its scopes and its controller id
 */
export const JwtClaimsSchema = z.strictObject({
  name: z.string().min(1).max(128).default('sub'),
  scopes: z.string().min(1).max(128).default('scope'),
  controllerId: z.string().min(1).max(128).default('oo_controller_id')
})
export type JwtClaims = z.infer<typeof JwtClaimsSchema>

/** a caller as the file (or GATEWAY_CALLERS) gives it; the schema is strict, so it holds no `identity` */
export type StaticCaller = z.infer<typeof CallerSchema>
/**
 * An authenticated caller. `identity` is set by the authenticator alone, for a JWT caller
 * (`jwt:<iss>#<sub>`, src/callers/jwt.ts); a static caller's is its name (src/control/identity.ts).
 * Kept out of CallerSchema so that no callers file can claim another's identity.
 */
export type Caller = StaticCaller & { readonly identity?: string }

export const CallersSchema = z.array(CallerSchema).min(1).superRefine((callers, ctx) => {
  const names = new Set<string>()
  const controllers = new Set<string>()
  const digests = new Set<string>()
  callers.forEach((c, i) => {
    if (names.has(c.name)) ctx.addIssue({ code: 'custom', message: `duplicate caller name "${c.name}"`, path: [i, 'name'] })
    if (digests.has(c.tokenSha256)) ctx.addIssue({ code: 'custom', message: 'two callers share one token digest', path: [i, 'tokenSha256'] })
    if (c.controllerId !== undefined && c.scopes.includes('control')) {
      // ids that differ only in letter case are one id (docs/design.md#controller-bindings)
      const key = controllerKey(c.controllerId)
      if (controllers.has(key)) ctx.addIssue({ code: 'custom', message: `controllerId "${c.controllerId}" is not unique (letter case aside)`, path: [i, 'controllerId'] })
      controllers.add(key)
    }
    names.add(c.name)
    digests.add(c.tokenSha256)
  })
})
