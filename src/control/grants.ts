// The one check of grants per campaign (docs/design.md#grants), for both doors: every path that
// touches a campaign, its records or its tasks asks it — the pipeline (every mutation), reconcile
// and acknowledge, the lease read and the records (src/control/plane-reads.ts), `GET /v1/tasks/:taskId`,
// the campaign list, and the front door's methods (src/front/door.ts) — after authentication and
// scopes, before anything is written or sent. A refusal is 403 campaign_forbidden (the front
// door's tasks/get answers it as a missing task, -32001), counted by reason, logged at debug.
// A caller that reaches every campaign costs nothing more here: no ledger read, no remote read.
import type { Logger } from 'pino'
import type { Caller } from '../../schemas/callers.js'
import { everyCampaign, hasProjectGrants, matchesAny, mayNameProject, mayReach, reachOf, type Access, type Reach } from '../callers/grants.js'
import { GatewayError } from '../core/errors.js'
import type { RecordStore } from '../ledger/types.js'
import { campaignEntries, type CampaignProjects } from './campaign-projects.js'

/** why a grant refused, the label of gateway_authz_refusals_total: a small fixed set */
export const AUTHZ_REFUSALS = ['no_grants', 'campaign_not_granted', 'project_unknown', 'project_not_granted', 'task_unknown'] as const
export type AuthzRefusal = typeof AUTHZ_REFUSALS[number]

const MESSAGES: Record<AuthzRefusal, string> = {
  no_grants: 'The caller has no grants, and this gateway requires them.',
  campaign_not_granted: 'The caller has no grant for this campaign.',
  project_unknown: 'The caller has no grant for this campaign.',
  project_not_granted: 'The caller has no grant for the project this submission names.',
  task_unknown: 'The caller has no grant for this task\'s campaign.'
}

export interface GrantGate {
  /** throws campaign_forbidden unless the caller may read (or control) the campaign */
  require: (caller: Caller, access: Access, campaignId: string) => Promise<void>
  /** throws campaign_forbidden unless the caller may name this project in a submission */
  requireProject: (caller: Caller, project: string) => void
  /**
   * throws campaign_forbidden unless the caller may read every campaign the task is tied to (the
   * ledger's records of the submission that made it): undefined, synchronously, for a caller that
   * reaches every campaign. A task tied to none is an all-campaigns grant's only
   */
  requireTask: (caller: Caller, taskId: string) => Promise<void> | undefined
  /**
   * a campaign list payload as this caller may see it; a list read from the remote (`fresh`)
   * teaches the campaigns' projects, a stored answer replayed does not
   */
  campaignList: (caller: Caller, payload: unknown, fresh?: boolean) => unknown
}

export interface GrantGateOptions {
  requireGrants: boolean
  ledger: RecordStore
  projects: CampaignProjects
  logger: Logger
  onRefused?: (reason: AuthzRefusal) => void
}

export function createGrantGate (o: GrantGateOptions): GrantGate {
  const reach = (caller: Caller): Reach => reachOf(caller, o.requireGrants)

  const refuse = (caller: Caller, reason: AuthzRefusal): never => {
    o.onRefused?.(reason)
    o.logger.debug({ caller: caller.name, reason }, 'campaign forbidden by grants')
    throw new GatewayError('campaign_forbidden', { message: MESSAGES[reason] })
  }

  /** true, or why not: the campaign by its id, else by its project as the remote reported it */
  async function reaches (r: Exclude<Reach, { all: true }>, access: Access, campaignId: string): Promise<true | AuthzRefusal> {
    if (!r.granted) return 'no_grants'
    if (matchesAny(r[access].campaigns, campaignId)) return true
    // only a caller holding project grants makes the gateway find out a campaign's project
    if (!hasProjectGrants(r, access)) return 'campaign_not_granted'
    const project = await o.projects.lookup(campaignId)
    if (project === undefined) return 'project_unknown'
    return mayReach(r, access, campaignId, project) ? true : 'campaign_not_granted'
  }

  return {
    require: async (caller, access, campaignId) => {
      const r = reach(caller)
      if (r.all) return
      const ok = await reaches(r, access, campaignId)
      if (ok !== true) refuse(caller, ok)
    },
    requireProject: (caller, project) => {
      const r = reach(caller)
      if (!mayNameProject(r, project)) refuse(caller, !r.all && !r.granted ? 'no_grants' : 'project_not_granted')
    },
    requireTask: (caller, taskId) => {
      const r = reach(caller)
      if (r.all) return undefined
      return (async () => {
        if (!r.granted) refuse(caller, 'no_grants')
        const campaigns = await o.ledger.campaignsOfTask(taskId)
        if (campaigns.length === 0) {
          // no record ties it to a campaign: made outside the gateway, or not at all
          if (!everyCampaign(r, 'read')) refuse(caller, 'task_unknown')
          return
        }
        for (const c of campaigns) {
          const ok = await reaches(r, 'read', c)
          if (ok !== true) refuse(caller, ok)
        }
      })()
    },
    campaignList: (caller, payload, fresh = true) => {
      if (fresh) o.projects.learn(payload)
      const r = reach(caller)
      if (r.all) return payload
      // the campaigns it may read, by each entry's own project; nothing else of the payload, which
      // may count or name what it may not (only the read's operation and request id, as written)
      const p = typeof payload === 'object' && payload !== null ? payload as Record<string, unknown> : {}
      const seen: Record<string, unknown> = {}
      if (p.operation !== undefined) seen.operation = p.operation
      if (p.requestId !== undefined) seen.requestId = p.requestId
      seen.campaigns = campaignEntries(payload)
        .filter((e) => e.campaignId !== undefined && mayReach(r, 'read', e.campaignId, e.project))
        .map((e) => e.entry)
      return seen
    }
  }
}
