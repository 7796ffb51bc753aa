// One clock per decision (docs/design.md#one-clock): every deadline is written and judged on the
// ledger's clock, and this replica measures how far its own clock is from the ledger's (at start
// and every 30 s) and from the remote's (from every lease a claim or renewal returns: `expires_at`
// against the TTL asked, within the round trip). An offset past GATEWAY_LEASE_SAFETY_MS refuses
// mutations with 503 clock_skew; reads go on. Each offset is the value of its possible interval
// nearest zero: a measurement can understate a skew by its uncertainty, never invent one.
import { GatewayError } from '../core/errors.js'

export type ClockPeer = 'ledger' | 'remote'

export interface ClockWatchOptions {
  /** this replica's clock */
  now: () => number
  /** the ledger's clock (one round trip) */
  ledgerNow: () => Promise<number>
  /** the largest offset either peer may have (GATEWAY_LEASE_SAFETY_MS) */
  marginMs: number
  /** how often the ledger's offset is measured (default 30 s) */
  intervalMs?: number
  onOffset?: (peer: ClockPeer, offsetMs: number) => void
  onError?: (err: unknown) => void
}

export interface ClockWatch {
  /** measures the ledger's offset now */
  measureLedger: () => Promise<number>
  /** a lease a claim or renewal returned: its expiry against the TTL asked, sent and answered at */
  observeLease: (expiresAtSeconds: number, ttlSeconds: number, sentAt: number, answeredAt: number) => void
  /**
   * 503 clock_skew when a peer's offset is past the margin. A claim is judged on the ledger's
   * offset alone: it needs no local view of the remote's clock, and it is how the remote's
   * offset is measured again once the remote's clock is put right
   */
  check: (o: { claim: boolean }) => void
  /** the offsets last measured (undefined: not yet) and whether both are within the margin */
  status: () => { ok: boolean; ledgerOffsetMs: number | undefined; remoteOffsetMs: number | undefined; marginMs: number }
  start: () => Promise<void>
  stop: () => void
}

/** the point of [lo, hi] nearest zero */
const nearestZero = (lo: number, hi: number): number => lo > 0 ? lo : hi < 0 ? hi : 0

export function createClockWatch (o: ClockWatchOptions): ClockWatch {
  const offsets: Record<ClockPeer, number | undefined> = { ledger: undefined, remote: undefined }
  let timer: NodeJS.Timeout | undefined
  const set = (peer: ClockPeer, ms: number): void => {
    offsets[peer] = ms
    o.onOffset?.(peer, ms)
  }
  const past = (ms: number | undefined): boolean => ms !== undefined && Math.abs(ms) > o.marginMs

  async function measureLedger (): Promise<number> {
    const sent = o.now()
    const theirs = await o.ledgerNow()
    const back = o.now()
    const ms = nearestZero(theirs - back, theirs - sent)
    set('ledger', ms)
    return ms
  }

  return {
    measureLedger,
    observeLease: (expiresAt, ttl, sentAt, answeredAt) => {
      // the remote set expires_at to its now plus the TTL, in whole seconds (floored, rounded or
      // ceiled: a second either way), at some moment between the send and the answer
      const remoteAt = (expiresAt - ttl) * 1000
      set('remote', nearestZero(remoteAt - 1000 - answeredAt, remoteAt + 1000 - sentAt))
    },
    check: ({ claim }) => {
      const peer: ClockPeer | undefined = past(offsets.ledger) ? 'ledger' : !claim && past(offsets.remote) ? 'remote' : undefined
      if (peer === undefined) return
      const ms = Math.round(offsets[peer]!)
      throw new GatewayError('clock_skew', {
        message: `This replica's clock is ${Math.abs(ms)} ms ${ms > 0 ? 'behind' : 'ahead of'} the ${peer}'s, past the ${o.marginMs} ms safety margin; nothing was sent. Fix the clock (NTP) or retry on another replica.`
      })
    },
    status: () => ({ ok: !past(offsets.ledger) && !past(offsets.remote), ledgerOffsetMs: offsets.ledger, remoteOffsetMs: offsets.remote, marginMs: o.marginMs }),
    start: async () => {
      await measureLedger().catch((err: unknown) => o.onError?.(err))
      timer ??= setInterval(() => { measureLedger().catch((err: unknown) => o.onError?.(err)) }, o.intervalMs ?? 30_000)
      timer.unref()
    },
    stop: () => {
      if (timer !== undefined) clearInterval(timer)
      timer = undefined
    }
  }
}
