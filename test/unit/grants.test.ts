// Grants per campaign and project (docs/design.md#grants), without sockets: the pattern language
// (literal ids and one trailing `*`, anchored, case-sensitive), what a callers file may say and
// the words of its refusals, what a caller reaches (admins every campaign, no grants every
// campaign unless GATEWAY_REQUIRE_GRANTS, control implying read), and a JWT caller's grants from
// its mapped claims.
import { describe, expect, it } from 'vitest'
import { parseCallers } from '../../src/config/callers.js'
import { callerOf } from '../../src/callers/jwt.js'
import { matchesAny, reachOf, everyCampaign, mayReach } from '../../src/callers/grants.js'
import { JwtClaimsSchema, type Caller } from '../../schemas/callers.js'

const digest = (c: string): string => c.repeat(64)
const entry = (name: string, extra: object = {}, scopes = ['read', 'control'], d = 'a'): object =>
  ({ name, tokenSha256: digest(d), scopes, ...(scopes.includes('control') ? { controllerId: `ctl-${name}` } : {}), ...extra })
const parse = (v: unknown): ReturnType<typeof parseCallers> => parseCallers(JSON.stringify(v))
const problemsOf = (v: unknown): string[] => { const p = parse(v); return 'problems' in p ? p.problems : [] }
const callerWith = (grants: object | undefined, scopes = ['read', 'control']): Caller => {
  const p = parse([entry('c', grants === undefined ? {} : { grants }, scopes)])
  if ('problems' in p) throw new Error(p.problems.join('; '))
  return p.callers[0]!
}

describe('the pattern language', () => {
  it('a literal id matches itself alone, case-sensitive and anchored; a trailing * matches every id with that prefix, the prefix itself included', () => {
    expect(matchesAny(['team-a-7'], 'team-a-7')).toBe(true)
    for (const id of ['team-a-70', 'xteam-a-7', 'Team-a-7', 'team-a-']) expect(matchesAny(['team-a-7'], id), id).toBe(false)
    for (const id of ['team-a-', 'team-a-7', 'team-a-7.b:c']) expect(matchesAny(['team-a-*'], id), id).toBe(true)
    for (const id of ['team-a', 'team-b-7', 'TEAM-A-7', 'x-team-a-7']) expect(matchesAny(['team-a-*'], id), id).toBe(false)
    expect(matchesAny(['*'], 'anything.at:all')).toBe(true)
    expect(matchesAny([], 'team-a-7')).toBe(false)
  })

  it('is validated at load: an id or a prefix with one * at its end, for campaigns and projects alike, each refusal naming where it is', () => {
    expect(problemsOf([entry('ok', { grants: { read: { campaigns: ['team-a-*', 'exact.id:1', '*'], projects: ['vision', 'ml/*', 'Team Alpha'] }, control: { campaigns: ['team-a-7'] } } })])).toEqual([])
    const bad = problemsOf([entry('bad', { grants: { read: { campaigns: ['team-*-a', 'team a*', '', '**', 'x'.repeat(129), 'é*'], projects: ['a*b', '', 'zw\u200bsp'] } } })])
    expect(bad).toHaveLength(9)
    expect(bad[0]).toBe('GATEWAY_CALLERS[0].grants.read.campaigns[0]: must be a campaign id (1–128 characters of [A-Za-z0-9._:-]) or such a prefix followed by one "*" at the end (team-a-*; * alone is every campaign)')
    for (const i of [1, 2, 3, 4, 5]) expect(bad, String(i)).toContain(`GATEWAY_CALLERS[0].grants.read.campaigns[${i}]: must be a campaign id (1–128 characters of [A-Za-z0-9._:-]) or such a prefix followed by one "*" at the end (team-a-*; * alone is every campaign)`)
    expect(bad).toContain('GATEWAY_CALLERS[0].grants.read.projects[0]: must be a project name (1–256 characters, none of them "*", a control, format or line-separator character) or such a prefix followed by one "*" at the end')
    expect(problemsOf([entry('bad', { grants: { read: { campaign: ['a'] } } })])).toEqual(['GATEWAY_CALLERS[0].grants.read.campaign: unknown field'])
    expect(problemsOf([entry('bad', { grants: { write: {} } })])).toEqual(['GATEWAY_CALLERS[0].grants.write: unknown field'])
  })

  it('a control grant needs the control scope, and an admin takes none: each would say what it does not do', () => {
    expect(problemsOf([entry('r', { grants: { control: { campaigns: ['a'] } } }, ['read'])])).toEqual(['GATEWAY_CALLERS[0].grants.control: needs the control scope (the caller could not use it)'])
    expect(problemsOf([entry('adm', { grants: { read: { campaigns: ['a'] } } }, ['read', 'admin'])])).toEqual(['GATEWAY_CALLERS[0].grants: an admin keeps every campaign; grants would be ignored'])
  })
})

describe('the callers file with a grants table for callers from the identity provider', () => {
  it('is an object of callers and grants keyed by identity; the array form stays as it was', () => {
    const p = parse({ callers: [entry('s')], grants: { 'jwt:https://idp.example/realms/ml#5f1c-9a2e': { control: { campaigns: ['team-b-*'] } } } })
    expect('problems' in p).toBe(false)
    if ('problems' in p) return
    expect(p.callers.map((c) => c.name)).toEqual(['s'])
    expect(p.identityGrants?.get('jwt:https://idp.example/realms/ml#5f1c-9a2e')).toEqual({ control: { campaigns: ['team-b-*'] } })
    const arr = parse([entry('s')])
    expect('problems' in arr ? arr.problems : arr.identityGrants?.size ?? 0).toBe(0)
  })

  it('refuses a key that is no JWT identity, an unknown member, and an object form that holds nobody', () => {
    expect(problemsOf({ callers: [entry('s')], grants: { 'static:s': { read: { campaigns: ['a'] } } } })).toEqual(['GATEWAY_CALLERS.grants: "static:s" is not a JWT caller\'s identity (jwt:<issuer>#<subject>); a static caller\'s grants go in its own entry'])
    expect(problemsOf({ callers: [entry('s')], extra: 1 })).toEqual(['GATEWAY_CALLERS.extra: unknown field'])
    expect(problemsOf({ callers: [], grants: {} })).toEqual(['GATEWAY_CALLERS: holds no caller and no grants'])
  })
})

describe('what a caller reaches', () => {
  it('no grants: every campaign, unless GATEWAY_REQUIRE_GRANTS; then none', () => {
    const c = callerWith(undefined)
    expect(reachOf(c, false).all).toBe(true)
    const r = reachOf(c, true)
    expect(r.all).toBe(false)
    expect(mayReach(r, 'read', 'team-a-7', undefined)).toBe(false)
  })

  it('admins keep every campaign, under GATEWAY_REQUIRE_GRANTS too', () => {
    expect(reachOf(callerWith(undefined, ['read', 'admin']), true).all).toBe(true)
  })

  it('control implies read; read alone controls nothing; a project grant reaches a campaign reported under it', () => {
    const r = reachOf(callerWith({ read: { campaigns: ['shared-*'] }, control: { campaigns: ['team-a-*'], projects: ['vision'] } }), false)
    expect(mayReach(r, 'read', 'team-a-7', undefined)).toBe(true)
    expect(mayReach(r, 'control', 'team-a-7', undefined)).toBe(true)
    expect(mayReach(r, 'read', 'shared-1', undefined)).toBe(true)
    expect(mayReach(r, 'control', 'shared-1', undefined)).toBe(false)
    expect(mayReach(r, 'control', 'vis-3', 'vision')).toBe(true)
    expect(mayReach(r, 'read', 'vis-3', 'vision')).toBe(true)
    expect(mayReach(r, 'control', 'vis-3', undefined)).toBe(false)
    expect(mayReach(r, 'read', 'team-b-7', 'beta')).toBe(false)
  })

  it('an all-campaigns grant is * among the campaigns of that access', () => {
    expect(everyCampaign(reachOf(callerWith({ read: { campaigns: ['*'] } }), true), 'read')).toBe(true)
    expect(everyCampaign(reachOf(callerWith({ read: { campaigns: ['*'] } }), true), 'control')).toBe(false)
    expect(everyCampaign(reachOf(callerWith({ control: { campaigns: ['team-*'] } }), true), 'read')).toBe(false)
    expect(everyCampaign(reachOf(callerWith(undefined), false), 'control')).toBe(true)
  })
})

describe('a JWT caller\'s grants from mapped claims', () => {
  const claims = JwtClaimsSchema.parse({ campaigns: 'groups', projects: 'oo_projects' })
  const payload = (extra: object): Record<string, unknown> => ({ iss: 'https://idp', sub: 'u-1', sub_name: 'x', scope: 'read control', oo_controller_id: 'ctl-u1', ...extra })
  const of = (extra: object, c = claims): Caller => {
    const r = callerOf(payload({ sub: 'u-1', ...extra }), { ...c, name: 'sub' }, 'token', new Set())
    if ('reason' in r) throw new Error(r.detail)
    return r.caller
  }

  it('an array or a space-separated string; entries that are no pattern (an IdP\'s other groups) are not grants', () => {
    expect(of({ groups: ['team-a-*', 'Domain Users', '/admins'], oo_projects: 'vision beta' }).grants).toEqual({
      read: { campaigns: ['team-a-*'], projects: ['vision', 'beta'] },
      control: { campaigns: ['team-a-*'], projects: ['vision', 'beta'] }
    })
    expect(of({ groups: 'team-a-7 team-c-*' }).grants).toEqual({ read: { campaigns: ['team-a-7', 'team-c-*'], projects: [] }, control: { campaigns: ['team-a-7', 'team-c-*'], projects: [] } })
  })

  it('with a grants claim mapped, a token without it reaches nothing; with none mapped, it has no grants', () => {
    expect(of({}).grants).toEqual({ read: { campaigns: [], projects: [] }, control: { campaigns: [], projects: [] } })
    expect(of({ groups: ['team-a-*'] }, JwtClaimsSchema.parse({})).grants).toBeUndefined()
  })

  it('a read-only token\'s claim grants read alone', () => {
    expect(of({ scope: 'read', groups: ['team-a-*'] }).grants).toEqual({ read: { campaigns: ['team-a-*'], projects: [] } })
  })
})
