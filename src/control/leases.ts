// Leases as the gateway knows them (docs/design.md#leases). Local state can refuse, never
// authorise: when it is unknown the remote is asked with a fresh `read_control` (never a
// coalesced one), and a mutation is refused before anything is sent when the lease is
// another controller's or expires within the safety margin.
import type { LeaseStore, LeaseView } from '../ledger/types.js'
import type { Discovery } from '../discovery/discovery.js'
import type { UpstreamClient } from '../upstream/client.js'
import { readRpc } from '../argus/read-rpc.js'
import { GatewayError } from '../core/errors.js'
import { parseLeaseResult, wireParams, type Lease } from './wire.js'
import { clockAllowanceMs, clockSkew, nearestZero, type ClockInterval } from './clocks.js'

export interface LeaseKeeperOptions {
  ledger: LeaseStore
  client: UpstreamClient
  discovery: Discovery
  leaseSafetyMs: number
  readTimeoutMs: number
  now: () => number
  /** a lease read's answer carried the remote's `Date`: it measures the remote's clock (docs/design.md#one-clock) */
  onDate?: (dateMs: number, sentAt: number, answeredAt: number) => void
}

export interface LeaseKeeper {
  /** the remote's lease now, recorded as known; an epoch below one seen is invalid */
  fresh: (campaignId: string) => Promise<Lease | null>
  /**
   * the caller's lease, or a refusal (lease_not_held / lease_expired) with nothing sent; from
   * the remote when the local lease is unknown or `fresh` is asked (cancel: docs/design.md#leases);
   * `view`: the local view, already read with the campaign's ticket (null: none), else read here;
   * `clock`: the remote's clock as measured (docs/design.md#one-clock), whose width and offset
   * the lease must outlive beyond the safety margin; `remoteClock` reads it again after a fresh read
   */
  require: (campaignId: string, controllerId: string, opts: { fresh?: boolean; view?: LeaseView | null; remoteClock: () => ClockInterval | undefined }) => Promise<Lease>
  /**
   * ms left before the lease enters the margin, on the remote's clock as measured: the safety
   * margin plus the measurement's width plus its offset (negative: already inside it)
   */
  usableMs: (lease: Lease, remote: ClockInterval) => number
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
    const method = o.discovery.model().controlMethods.read_control
    if (method === undefined) {
      const cap = o.discovery.capability('control.read_control')
      throw new GatewayError('capability_unavailable', { missingPrerequisites: [cap.reason] })
    }
    const wire = o.discovery.wire()
    const sentAt = o.now()
    const result = await readRpc(o, wire, {
      call: { method, params: wireParams.readControl(campaignId), op: 'read_control', deadline: sentAt + o.readTimeoutMs, headers: wire.headers(), withDate: true },
      capability: 'control.read_control',
      missingOnNotFound: ['operation read_control answered method not found'],
      dated: (dateMs) => { o.onDate?.(dateMs, sentAt, o.now()) }
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

  const usableMs = (lease: Lease, remote: ClockInterval): number => lease.expiresAt * 1000 - o.now() - o.leaseSafetyMs - clockAllowanceMs(remote)
  const unmeasured = (): GatewayError => new GatewayError('clock_skew', { message: 'The remote\'s clock is not measured; nothing was sent. Retry.' })
  const notHeld = (): GatewayError => new GatewayError('lease_not_held', { message: 'The caller does not hold the lease of this campaign; claim it first.' })
  const expired = (): GatewayError => new GatewayError('lease_expired', { message: 'The lease has expired or expires within the safety margin; renew or claim it.' })

  return {
    fresh,
    usableMs,
    require: async (campaignId, controllerId, opts) => {
      const view = opts.fresh === true ? undefined : opts.view !== undefined ? opts.view ?? undefined : await o.ledger.getLease(campaignId)
      const lease = view?.known === true ? view.lease : await fresh(campaignId)
      if (lease === null || lease.controllerId !== controllerId) throw notHeld()
      // the measurement as it stands now: a fresh read may have measured again, a step dropped it
      const remote = opts.remoteClock()
      if (remote === undefined) throw unmeasured()
      // a cancel's fresh read measured again: a remote whose clock moved past the margin since decides nothing
      if (Math.abs(nearestZero(remote)) > o.leaseSafetyMs) throw clockSkew('remote', remote, o.leaseSafetyMs)
      if (usableMs(lease, remote) < 0) throw expired()
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
