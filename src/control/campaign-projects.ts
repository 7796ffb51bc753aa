// Each campaign's OpenOperator project as the remote last reported it (docs/design.md#grants):
// learned from every Argus campaign list the gateway reads — a caller's `GET /v1/campaigns`, the
// front door's `campaign.list`, and its own read when a project grant needs a campaign it has not
// seen — never from a caller's word (a submission's `project` is what the caller asked for, not
// what the campaign is). Kept in this process: a replica that has not read the list yet treats
// the campaign's project as unknown, the safe side, and reads the list once to find out.

type Obj = Record<string, unknown>
const isRecord = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/** one entry of the remote's campaign list as the gateway reads it; the entry as it came */
export interface CampaignEntry { entry: unknown; campaignId: string | undefined; project: string | undefined }

/**
 * at most this many campaigns are remembered (a list longer than this is read in its first ones):
 * a campaign past them has no known project, the safe side (docs/design.md#bounded-maps)
 */
export const MAX_CAMPAIGNS = 10_000
/** the shortest time between two reads of the list the gateway makes itself */
export const CAMPAIGN_LIST_MIN_INTERVAL_MS = 10_000

const text = (v: unknown): string | undefined => typeof v === 'string' && v !== '' ? v : undefined

/**
 * The entries of a campaign list payload: `campaigns`, an array whose entries name their
 * campaign in `campaign_id` (or `campaignId`) and their project in `project` (or `project_id`,
 * `projectId`). An entry that names no campaign is kept with none: nobody with grants sees it.
 */
export function campaignEntries (payload: unknown): CampaignEntry[] {
  const list = isRecord(payload) ? payload.campaigns : undefined
  if (!Array.isArray(list)) return []
  return list.map((entry) => isRecord(entry)
    ? { entry, campaignId: text(entry.campaign_id) ?? text(entry.campaignId), project: text(entry.project) ?? text(entry.project_id) ?? text(entry.projectId) }
    : { entry, campaignId: undefined, project: undefined })
}

export interface CampaignProjects {
  /** what the remote's list last said, every campaign at once: the list is the remote's whole report */
  learn: (payload: unknown) => void
  /**
   * the campaign's project: as last learned, else after one read of the list when none was made
   * within CAMPAIGN_LIST_MIN_INTERVAL_MS (one in flight is shared); undefined when still unknown
   */
  lookup: (campaignId: string) => Promise<string | undefined>
}

export interface CampaignProjectsOptions {
  /** the remote's campaign list payload (an Argus read); absent or failing, nothing is learned */
  readList: (() => Promise<unknown>) | undefined
  /** a monotonic clock, ms */
  monotonic: () => number
  onReadFailed?: (err: unknown) => void
}

export function createCampaignProjects (o: CampaignProjectsOptions): CampaignProjects {
  let projects = new Map<string, string>()
  let lastRead = -Infinity
  let reading: Promise<void> | undefined
  // a coalesced read hands one payload to every waiter: learned once
  let learned: unknown
  const learn = (payload: unknown): void => {
    if (payload === learned) return
    learned = payload
    const next = new Map<string, string>()
    for (const e of campaignEntries(payload)) {
      if (next.size >= MAX_CAMPAIGNS) break
      if (e.campaignId !== undefined && e.project !== undefined) next.set(e.campaignId, e.project)
    }
    projects = next
  }
  const readOnce = (): Promise<void> | undefined => {
    if (reading !== undefined) return reading
    if (o.readList === undefined || o.monotonic() - lastRead < CAMPAIGN_LIST_MIN_INTERVAL_MS) return undefined
    lastRead = o.monotonic()
    reading = o.readList().then(learn, (err: unknown) => { o.onReadFailed?.(err) }).finally(() => { reading = undefined })
    return reading
  }
  return {
    learn,
    lookup: async (campaignId) => {
      const known = projects.get(campaignId)
      if (known !== undefined) return known
      await readOnce()
      return projects.get(campaignId)
    }
  }
}
