// The remote's campaign-control memory: its clock, each campaign's lease and highest epoch,
// every request id it applied with the stored result (persistent idempotency), the
// interventions, and how often each request id arrived. Plain data; the rules live in
// control-rules.ts.
import type { AppliedMutation, InterventionRecord, Lease } from './types.js'

export interface StoredResult {
  operation: AppliedMutation['operation']
  result: unknown
  /** The task a submission created, for request_status. */
  taskId?: string
}

interface Campaign {
  lease: Lease | null
  /** The highest epoch issued; a takeover gets the next one. */
  epoch: number
  results: Map<string, StoredResult>
  interventions: InterventionRecord[]
}

export class ControlBook {
  private offset = 0
  private readonly campaigns = new Map<string, Campaign>()
  private readonly log: AppliedMutation[] = []
  private readonly counts = new Map<string, number>()

  constructor(private readonly clock: () => number) {}

  now(): number {
    return this.clock() + this.offset
  }

  nowSeconds(): number {
    return Math.floor(this.now() / 1000)
  }

  advance(ms: number): void {
    if (!(ms >= 0)) throw new TypeError('advanceClock takes a non-negative number of ms')
    this.offset += ms
  }

  /** The stored lease, expired or not. */
  storedLease(campaignId: string): Lease | null {
    return this.campaigns.get(campaignId)?.lease ?? null
  }

  /** The lease while it is unexpired, else null. */
  liveLease(campaignId: string): Lease | null {
    const lease = this.storedLease(campaignId)
    return lease !== null && this.now() < lease.expires_at * 1000 ? { ...lease } : null
  }

  currentEpoch(campaignId: string): number {
    return this.campaigns.get(campaignId)?.epoch ?? 0
  }

  setLease(campaignId: string, lease: Lease | null): void {
    const campaign = this.campaign(campaignId)
    campaign.lease = lease === null ? null : { ...lease }
    if (lease !== null) campaign.epoch = lease.epoch
  }

  countReceipt(requestId: string): void {
    this.counts.set(requestId, (this.counts.get(requestId) ?? 0) + 1)
  }

  requestCounts(): Map<string, number> {
    return new Map(this.counts)
  }

  stored(campaignId: string, requestId: string): StoredResult | undefined {
    return this.campaigns.get(campaignId)?.results.get(requestId)
  }

  record(campaignId: string, requestId: string, stored: StoredResult): void {
    this.campaign(campaignId).results.set(requestId, structuredClone(stored))
    this.log.push({ operation: stored.operation, requestId, campaignId, at: this.now() })
  }

  applied(): AppliedMutation[] {
    return this.log.map((entry) => ({ ...entry }))
  }

  addIntervention(campaignId: string, record: InterventionRecord): void {
    this.campaign(campaignId).interventions.push(structuredClone(record))
  }

  interventions(campaignId: string): InterventionRecord[] {
    return structuredClone(this.campaigns.get(campaignId)?.interventions ?? [])
  }

  private campaign(campaignId: string): Campaign {
    let campaign = this.campaigns.get(campaignId)
    if (campaign === undefined) {
      campaign = { lease: null, epoch: 0, results: new Map(), interventions: [] }
      this.campaigns.set(campaignId, campaign)
    }
    return campaign
  }
}
