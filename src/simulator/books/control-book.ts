// The remote's campaign-control memory: its clock, each campaign's lease and highest epoch,
// every request id it applied with the stored result (persistent idempotency), the
// interventions, and every mutating request that arrived. Plain data; the rules live in
// ../extensions/control-rules.ts. Each applied mutation is logged with who sent it and what the book held
// just before, so tests can check the control invariants against the remote's own truth.
import type { AppliedMutation, InterventionRecord, Lease, MutationOperation, ReceivedMutation } from '../types.js'

export interface StoredResult {
  operation: MutationOperation
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

/** Who sent a mutation: the controller_id and controller_epoch it carried, if any. */
export interface Sender {
  controllerId: string | null
  epoch: number | null
}

/** The book just before a mutation applied, as AppliedMutation reports it. */
export type Witness = Pick<AppliedMutation, 'currentEpoch' | 'leaseLive'>

export class ControlBook {
  private offset = 0
  private readonly campaigns = new Map<string, Campaign>()
  private readonly log: AppliedMutation[] = []
  private readonly arrivals: ReceivedMutation[] = []

  constructor (private readonly clock: () => number) {}

  now (): number {
    return this.clock() + this.offset
  }

  nowSeconds (): number {
    return Math.floor(this.now() / 1000)
  }

  advance (ms: number): void {
    if (!(ms >= 0)) throw new TypeError('advanceClock takes a non-negative number of ms')
    this.offset += ms
  }

  /** The stored lease, expired or not. */
  storedLease (campaignId: string): Lease | null {
    return this.campaigns.get(campaignId)?.lease ?? null
  }

  /** The lease while it is unexpired, else null. */
  liveLease (campaignId: string): Lease | null {
    const lease = this.storedLease(campaignId)
    return lease !== null && this.now() < lease.expires_at * 1000 ? { ...lease } : null
  }

  currentEpoch (campaignId: string): number {
    return this.campaigns.get(campaignId)?.epoch ?? 0
  }

  setLease (campaignId: string, lease: Lease | null): void {
    const campaign = this.campaign(campaignId)
    campaign.lease = lease === null ? null : { ...lease }
    if (lease !== null) campaign.epoch = lease.epoch
  }

  /** A mutating request reached its handler, before anything about it is checked. */
  countReceipt (requestId: string, operation: MutationOperation, campaignId: unknown): void {
    this.arrivals.push({ requestId, operation, campaignId: typeof campaignId === 'string' && campaignId !== '' ? campaignId : null, at: this.now() })
  }

  received (): ReceivedMutation[] {
    return this.arrivals.map((entry) => ({ ...entry }))
  }

  requestCounts (): Map<string, number> {
    const counts = new Map<string, number>()
    for (const { requestId } of this.arrivals) counts.set(requestId, (counts.get(requestId) ?? 0) + 1)
    return counts
  }

  /**
   * Taken before a mutation runs: the campaign's epoch, and whether the sender holds a live
   * lease at its own epoch (a claimer: at any epoch, since a claim carries none).
   */
  witness (campaignId: string, operation: MutationOperation, sender: Sender): Witness {
    const live = this.liveLease(campaignId)
    const leaseLive = live !== null && live.controller_id === sender.controllerId && (operation === 'claim_control' || live.epoch === sender.epoch)
    return { currentEpoch: this.currentEpoch(campaignId), leaseLive }
  }

  stored (campaignId: string, requestId: string): StoredResult | undefined {
    return this.campaigns.get(campaignId)?.results.get(requestId)
  }

  /** An applied mutation: its stored result, and its log entry with the witness taken before it ran. */
  record (campaignId: string, requestId: string, stored: StoredResult, sender: Sender, before: Witness): void {
    this.campaign(campaignId).results.set(requestId, structuredClone(stored))
    const { controllerId, epoch } = sender
    this.log.push({ operation: stored.operation, requestId, campaignId, at: this.now(), controllerId, epoch, currentEpoch: before.currentEpoch, leaseLive: before.leaseLive })
  }

  applied (): AppliedMutation[] {
    return this.log.map((entry) => ({ ...entry }))
  }

  addIntervention (campaignId: string, record: InterventionRecord): void {
    this.campaign(campaignId).interventions.push(structuredClone(record))
  }

  interventions (campaignId: string): InterventionRecord[] {
    return structuredClone(this.campaigns.get(campaignId)?.interventions ?? [])
  }

  private campaign (campaignId: string): Campaign {
    let campaign = this.campaigns.get(campaignId)
    if (campaign === undefined) {
      campaign = { lease: null, epoch: 0, results: new Map(), interventions: [] }
      this.campaigns.set(campaignId, campaign)
    }
    return campaign
  }
}
