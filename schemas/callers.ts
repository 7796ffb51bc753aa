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

/**
 * A campaign pattern (docs/design.md#grants): a campaign id, matched exactly and with its letter
 * case, or a prefix of one followed by one `*` at the end, matching every id that starts with it
 * (the prefix itself included); `*` alone is every campaign. No other wildcard: a team's prefix is
 * what grants name, and a pattern is then read at a glance.
 */
export const CAMPAIGN_PATTERN = /^(?:[A-Za-z0-9._:-]{1,128}|[A-Za-z0-9._:-]{0,127}\*)$/
export const CAMPAIGN_PATTERN_RULE = 'must be a campaign id (1–128 characters of [A-Za-z0-9._:-]) or such a prefix followed by one "*" at the end (team-a-*; * alone is every campaign)'
export const isCampaignPattern = (s: string): boolean => CAMPAIGN_PATTERN.test(s)
/**
 * A project pattern: a project name as a submission names it (1–256 characters), or a prefix of one
 * followed by one `*` at the end. A name holding `*` can only be granted by a shorter prefix; no
 * control, format or line-separator character, as a pattern is shown to admins and on a terminal
 */
const PROJECT_TEXT = /^[^*\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]*\*?$/u
export const PROJECT_PATTERN_RULE = 'must be a project name (1–256 characters, none of them "*", a control, format or line-separator character) or such a prefix followed by one "*" at the end'
export const isProjectPattern = (s: string): boolean => s.length >= 1 && s.length <= 256 && PROJECT_TEXT.test(s)

/** the most patterns one list of a grant holds */
export const MAX_GRANT_PATTERNS = 1000

export const GrantSetSchema = z.strictObject({
  campaigns: z.array(z.string().regex(CAMPAIGN_PATTERN, CAMPAIGN_PATTERN_RULE)).max(MAX_GRANT_PATTERNS).optional(),
  projects: z.array(z.string().refine(isProjectPattern, PROJECT_PATTERN_RULE)).max(MAX_GRANT_PATTERNS).optional()
})
export type GrantSet = z.infer<typeof GrantSetSchema>
/**
 * What a caller may reach (docs/design.md#grants): the campaigns and projects it may read, and
 * those it may control — control implies read. Absent: every campaign, unless
 * GATEWAY_REQUIRE_GRANTS; present, exactly what it says
 */
export const GrantsSchema = z.strictObject({ read: GrantSetSchema.optional(), control: GrantSetSchema.optional() })
export type Grants = z.infer<typeof GrantsSchema>

export const CallerSchema = z.strictObject({
  name: z.string().min(1).max(128)
    .refine((n) => !hasJwtPrefix(n), `must not start with "${JWT_NAME_PREFIX}" (reserved for callers from the identity provider)`)
    .refine(safeName, NAME_RULE),
  tokenSha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters').transform((s) => s.toLowerCase()),
  scopes: z.array(ScopeSchema).min(1),
  controllerId: ControllerIdSchema.optional(),
  // ISO 8601 with an offset (e.g. 2027-01-31T00:00:00Z); kept as ms since the epoch
  expiresAt: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time with an offset, e.g. 2027-01-31T00:00:00Z' }).transform((s) => Date.parse(s)).optional(),
  grants: GrantsSchema.optional()
}).refine((c) => !c.scopes.includes('control') || c.controllerId !== undefined, {
  message: 'required for a caller with the control scope',
  path: ['controllerId'],
  // judged whenever scopes and controllerId are themselves fine, so a bad digest does not hide it
  when: (p) => isObject(p.value) && p.issues.every((i) => i.path?.[0] !== 'scopes' && i.path?.[0] !== 'controllerId')
}).refine((c) => c.grants?.control === undefined || c.scopes.includes('control'), {
  // a grant the caller could never use reads as if it did something
  message: 'needs the control scope (the caller could not use it)',
  path: ['grants', 'control'],
  when: (p) => isObject(p.value) && p.issues.every((i) => i.path?.[0] !== 'scopes' && i.path?.[0] !== 'grants')
}).refine((c) => c.grants === undefined || !c.scopes.includes('admin'), {
  message: 'an admin keeps every campaign; grants would be ignored',
  path: ['grants'],
  when: (p) => isObject(p.value) && p.issues.every((i) => i.path?.[0] !== 'scopes' && i.path?.[0] !== 'grants')
})
/**
 * GATEWAY_JWT_CLAIMS (docs/design.md#authentication): which claims of a verified JWT name the
 * caller, hold its scopes and its controller id
 */
export const JwtClaimsSchema = z.strictObject({
  name: z.string().min(1).max(128).default('sub'),
  scopes: z.string().min(1).max(128).default('scope'),
  controllerId: z.string().min(1).max(128).default('oo_controller_id'),
  // grants from claims (docs/design.md#grants): unset, a JWT caller's grants come from the callers
  // file's table alone; set, from the claim (a space-separated string or an array), for read, and
  // for control where the token holds the control scope
  campaigns: z.string().min(1).max(128).optional(),
  projects: z.string().min(1).max(128).optional()
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

/** the callers a set holds, checked together: names, digests and controller ids unique */
const checkCallers = (callers: ReadonlyArray<z.infer<typeof CallerSchema>>, ctx: z.core.$RefinementCtx<unknown>, at: ReadonlyArray<string | number>): void => {
  const names = new Set<string>()
  const controllers = new Set<string>()
  const digests = new Set<string>()
  callers.forEach((c, i) => {
    if (names.has(c.name)) ctx.addIssue({ code: 'custom', message: `duplicate caller name "${c.name}"`, path: [...at, i, 'name'] })
    if (digests.has(c.tokenSha256)) ctx.addIssue({ code: 'custom', message: 'two callers share one token digest', path: [...at, i, 'tokenSha256'] })
    if (c.controllerId !== undefined && c.scopes.includes('control')) {
      // ids that differ only in letter case are one id (docs/design.md#controller-bindings)
      const key = controllerKey(c.controllerId)
      if (controllers.has(key)) ctx.addIssue({ code: 'custom', message: `controllerId "${c.controllerId}" is not unique (letter case aside)`, path: [...at, i, 'controllerId'] })
      controllers.add(key)
    }
    names.add(c.name)
    digests.add(c.tokenSha256)
  })
}

export const CallersSchema = z.array(CallerSchema).min(1).superRefine((callers, ctx) => { checkCallers(callers, ctx, []) })

/** a caller from the identity provider's identity, as src/callers/jwt.ts writes it */
export const JWT_IDENTITY = /^jwt:[^#]+#.+$/s

/**
 * The callers file's other form (docs/design.md#grants): the static callers, and grants keyed by
 * the identity of a caller from the identity provider (`jwt:<issuer>#<subject>`), which replace
 * what its token's mapped claims say. The array form stays the callers alone.
 */
export const CallersDocumentSchema = z.strictObject({
  callers: z.array(CallerSchema),
  grants: z.record(z.string(), GrantsSchema).optional()
}).superRefine((doc, ctx) => {
  checkCallers(doc.callers, ctx, ['callers'])
  const keys = Object.keys(doc.grants ?? {})
  for (const k of keys) {
    if (!JWT_IDENTITY.test(k) || k.length > 512 || !safeName(k)) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(k.slice(0, 64))} is not a JWT caller's identity (jwt:<issuer>#<subject>); a static caller's grants go in its own entry`, path: ['grants'] })
    }
  }
  if (doc.callers.length === 0 && keys.length === 0) ctx.addIssue({ code: 'custom', message: 'holds no caller and no grants', path: [] })
})
