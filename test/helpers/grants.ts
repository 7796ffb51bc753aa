// Callers with grants (docs/design.md#grants) for the grants tests of both doors: a callers file
// the test can rewrite and reload, the remote's campaign list with each campaign's project, and a
// controller-mode pair started on both.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sha256Hex } from '../../src/callers/tokens.js'
import type { ControlPair } from './control.js'
import type { PairOptions } from './fixtures.js'

/** the remote's campaign list: each campaign's project as the remote reports it; orphan-1 names none */
export const CAMPAIGN_LIST = [
  { campaign_id: 'team-a-1', project: 'alpha', stage: 'train' },
  { campaign_id: 'team-b-7', project: 'beta', stage: 'eval' },
  { campaign_id: 'vis-3', project: 'vision', stage: 'train' },
  { campaign_id: 'orphan-1', stage: 'train' }
]

export const ROLES = ['teamA', 'teamB', 'reader', 'vision', 'star', 'legacy', 'ops'] as const
export type Role = typeof ROLES[number]
export type Tokens = Record<Role, string>

/**
 * the callers file's entries: team-a and team-b each granted control of their own prefix, a
 * reader of team-a's, a project's controller, a reader of every campaign (`*`), a caller without
 * grants and an admin; team-a's grants may be given
 */
export function grantCallers (t: Tokens, teamA: object = { control: { campaigns: ['team-a-*'] } }): object[] {
  const c = (name: string, token: string, scopes: string[], grants?: object): object =>
    ({ name, tokenSha256: sha256Hex(token), scopes, ...(scopes.includes('control') ? { controllerId: `ctl-${name}` } : {}), ...(grants === undefined ? {} : { grants }) })
  return [
    c('team-a', t.teamA, ['read', 'control'], teamA),
    c('team-b', t.teamB, ['read', 'control'], { control: { campaigns: ['team-b-*'] } }),
    c('reader', t.reader, ['read'], { read: { campaigns: ['team-a-*'] } }),
    c('vision', t.vision, ['read', 'control'], { control: { projects: ['vision'] } }),
    c('star', t.star, ['read'], { read: { campaigns: ['*'] } }),
    c('legacy', t.legacy, ['read', 'control']),
    c('ops', t.ops, ['read', 'control', 'admin'])
  ]
}

export interface CallersFile { path: string; write: (doc: unknown) => void }

/** a callers file in a temp directory, rewritten aside and renamed in place as an operator would */
export function callersFile (): CallersFile {
  const path = join(mkdtempSync(join(tmpdir(), 'oogw-grants-')), 'callers.json')
  const write = (doc: unknown): void => {
    writeFileSync(`${path}.tmp`, JSON.stringify(doc))
    renameSync(`${path}.tmp`, path)
  }
  return { path, write }
}

/** a controller-mode pair whose callers come from a file holding `doc` (by default grantCallers), its remote listing CAMPAIGN_LIST */
export async function startWithGrants (startControlPair: (o?: PairOptions) => Promise<ControlPair>, env: Record<string, string | undefined> = {}, doc?: (t: Tokens) => unknown): Promise<{ p: ControlPair; t: Tokens; file: CallersFile }> {
  const t = Object.fromEntries(ROLES.map((r) => [r, `tok-${randomBytes(18).toString('base64url')}`])) as Tokens
  const file = callersFile()
  file.write(doc?.(t) ?? grantCallers(t))
  const p = await startControlPair({ env: { GATEWAY_CALLERS: undefined, GATEWAY_CALLERS_FILE: file.path, ...env }, sim: { campaigns: CAMPAIGN_LIST } })
  return { p, t, file }
}
