// Leases as the gateway knows them (docs/design.md#leases). Local state can refuse, never
// authorise: when it is unknown the remote is asked with a fresh `read_control` (never a
// coalesced one), and a mutation is refused before anything is sent when the lease is
// another controller's or expires within the safety margin.
import type { Ledger, LeaseView } from '../ledger/types.js'
import type { Discovery } from '../discovery/discovery.js'
import type { UpstreamClient } from '../upstream/client.js'
import { readRpc } from '../argus/read-rpc.js'
import { GatewayError } from '../core/errors.js'
import { parseLeaseResult, wireParams, type Lease } from './wire.js'

export interface LeaseKeeperOptions {
  ledger: Ledger
  client: UpstreamClient
  discovery: Discovery
  leaseSafetyMs: number
  readTimeoutMs: number
  now: () => number
}

export interface LeaseKeeper {
  /** the remote's lease now, recorded as known; an epoch below one seen is invalid */
  fresh: (campaignId: string) => Promise<Lease | null>
  /**
   * the caller's lease, or a refusal (lease_not_held / lease_expired) with nothing sent; from
   * the remote when the local lease is unknown or `fresh` is asked (cancel: docs/design.md#leases);
   * `view`: the local view, already read with the campaign's ticket (null: none), else read here
   */
  require: (campaignId: string, controllerId: string, opts?: { fresh?: boolean; view?: LeaseView | null }) => Promise<Lease>
  /** ms left before the lease enters the safety margin (negative: already inside it) */
  usableMs: (lease: Lease) => number
  /** a lease the remote returned for a mutation: checked against the epochs seen, then kept */
  accept: (campaignId: string, lease: Lease) => Promise<boolean>
  forget: (campaignId: string) => Promise<void>
}

export function createLeaseKeeper (o: LeaseKeeperOptions): LeaseKeeper {
  async function belowSeen (campaignId: string, lease: Lease | null): Promise<boolean> {
    if (lease === null) return false
    const view = await o.ledger.getLease(campaignId)
    return view !== undefined && lease.epoch < view.maxEpochSeen
  }

  async function fresh (campaignId: string): Promise<Lease | null> {
    const method = o.discovery.snapshot().controlMethods.read_control
    if (method === undefined) {
      const cap = o.discovery.capability('control.read_control')
      throw new GatewayError('capability_unavailable', { missingPrerequisites: [cap.reason] })
    }
    const wire = o.discovery.wire()
    const result = await readRpc(o, wire, {
      call: { method, params: wireParams.readControl(campaignId), op: 'read_control', deadline: o.now() + o.readTimeoutMs, headers: wire.headers() },
      capability: 'control.read_control',
      missingOnNotFound: ['operation read_control answered method not found']
    })
    const parsed = parseLeaseResult(result)
    if (parsed === undefined) throw new GatewayError('upstream_invalid_response')
    if (await belowSeen(campaignId, parsed.lease)) {
      await o.ledger.markLeaseUnknown(campaignId, o.now())
      throw new GatewayError('upstream_invalid_response', { message: 'The remote returned an epoch lower than one already seen.' })
    }
    await o.ledger.putLease(campaignId, parsed.lease, o.now())
    return parsed.lease
  }

  const usableMs = (lease: Lease): number => lease.expiresAt * 1000 - o.now() - o.leaseSafetyMs
  const notHeld = (): GatewayError => new GatewayError('lease_not_held', { message: 'The caller does not hold the lease of this campaign; claim it first.' })
  const expired = (): GatewayError => new GatewayError('lease_expired', { message: 'The lease has expired or expires within the safety margin; renew or claim it.' })

  return {
    fresh,
    usableMs,
    require: async (campaignId, controllerId, opts = {}) => {
      const view = opts.fresh === true ? undefined : opts.view !== undefined ? opts.view ?? undefined : await o.ledger.getLease(campaignId)
      const lease = view?.known === true ? view.lease : await fresh(campaignId)
      if (lease === null || lease.controllerId !== controllerId) throw notHeld()
      if (usableMs(lease) < 0) throw expired()
      return lease
    },
    accept: async (campaignId, lease) => {
      if (await belowSeen(campaignId, lease)) {
        await o.ledger.markLeaseUnknown(campaignId, o.now())
        return false
      }
      await o.ledger.putLease(campaignId, lease, o.now())
      return true
    },
    forget: async (campaignId) => { await o.ledger.markLeaseUnknown(campaignId, o.now()) }
  }
}
