// What a caller may reach (docs/design.md#grants), as plain functions over its grants: no store,
// no remote. The control plane's gate (src/control/grants.ts) asks these for every campaign,
// record and task, for REST and the front door alike; the JWT verifier builds a caller's grants
// from its mapped claims here. Patterns are literal ids, or a prefix with one `*` at its end
// (schemas/callers.ts), compared with their letter case as campaign ids are.
import { MAX_GRANT_PATTERNS, isCampaignPattern, isProjectPattern, type Caller, type Grants, type GrantSet, type JwtClaims } from '../../schemas/callers.js'

export type Access = 'read' | 'control'

/** the patterns of one access: what a campaign id or a project must match */
export interface Patterns { readonly campaigns: readonly string[]; readonly projects: readonly string[] }

/**
 * What a caller reaches: every campaign (an admin; no grants without GATEWAY_REQUIRE_GRANTS), or
 * what its grants say for reading and for control — `granted` false when it has none at all
 * (GATEWAY_REQUIRE_GRANTS), for the refusal's reason
 */
export type Reach = { readonly all: true } | { readonly all: false; readonly granted: boolean; readonly read: Patterns; readonly control: Patterns }

const ALL: Reach = { all: true }
const EMPTY: Patterns = { campaigns: [], projects: [] }
const NONE: Reach = { all: false, granted: false, read: EMPTY, control: EMPTY }

const patternsOf = (s: GrantSet | undefined): Patterns => s === undefined ? EMPTY : { campaigns: s.campaigns ?? [], projects: s.projects ?? [] }

export function reachOf (caller: Caller, requireGrants: boolean): Reach {
  // admins keep every campaign: the runbook's fence and acknowledge are theirs wherever a record blocks
  if (caller.scopes.includes('admin')) return ALL
  const g = caller.grants
  if (g === undefined) return requireGrants ? NONE : ALL
  const control = patternsOf(g.control)
  const read = patternsOf(g.read)
  // control implies read: a controller that could not read its lease, records and tasks would act blind
  return {
    all: false,
    granted: true,
    control,
    read: { campaigns: [...read.campaigns, ...control.campaigns], projects: [...read.projects, ...control.projects] }
  }
}

/** whether a value matches one of the patterns: exactly, or by the prefix before a trailing `*` */
export function matchesAny (patterns: readonly string[], value: string): boolean {
  for (const p of patterns) {
    if (p.charCodeAt(p.length - 1) === 42 /* * */ ? value.startsWith(p.slice(0, -1)) : value === p) return true
  }
  return false
}

/** every campaign for this access, an untied task's included: all, or `*` among its campaign patterns */
export const everyCampaign = (r: Reach, access: Access): boolean => r.all || r[access].campaigns.includes('*')

/** a campaign by its id, or by its project as the remote reported it (undefined: not known) */
export function mayReach (r: Reach, access: Access, campaignId: string, project: string | undefined): boolean {
  if (r.all) return true
  const p = r[access]
  return matchesAny(p.campaigns, campaignId) || (project !== undefined && matchesAny(p.projects, project))
}

/** whether the caller holds project grants for this access at all: only then is a campaign's project worth finding out */
export const hasProjectGrants = (r: Reach, access: Access): boolean => !r.all && r[access].projects.length > 0

/** a submission naming a project: a project this caller may control */
export const mayNameProject = (r: Reach, project: string): boolean => r.all || matchesAny(r.control.projects, project)

/** a claim's entries that are patterns: a string split on whitespace, or an array's strings; anything else (an IdP's other groups) is no grant */
function claimList (raw: unknown, valid: (s: string) => boolean): string[] {
  const listed = typeof raw === 'string' ? raw.split(/\s+/) : Array.isArray(raw) ? raw : []
  return [...new Set(listed.filter((s): s is string => typeof s === 'string' && valid(s)))].slice(0, MAX_GRANT_PATTERNS)
}

/**
 * A JWT caller's grants from its mapped claims (GATEWAY_JWT_CLAIMS `campaigns`, `projects`): for
 * read, and for control where it holds the control scope; with neither claim mapped, none (the
 * callers file's table may still give some). Once a grants claim is mapped, a token without it
 * reaches nothing: grants restrict once present.
 */
export function grantsFromClaims (payload: Record<string, unknown>, claims: JwtClaims, scopes: readonly string[]): Grants | undefined {
  if (claims.campaigns === undefined && claims.projects === undefined) return undefined
  const set = {
    campaigns: claims.campaigns === undefined ? [] : claimList(payload[claims.campaigns], isCampaignPattern),
    projects: claims.projects === undefined ? [] : claimList(payload[claims.projects], isProjectPattern)
  }
  return scopes.includes('control') ? { read: set, control: set } : { read: set }
}
