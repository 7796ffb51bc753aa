// The A2A versions the remote refused with -32009 (docs/design.md#protocol-versions): a refused
// version is not spoken for a while, then probed again — the first read after the wait goes out
// in it. Each refusal of a probe doubles the wait, up to a maximum; an answer over the version
// starts it again from the first delay. Refusals that arrive while the version is refused already
// (a flood of reads sent before the first came back) count once. Pure: the caller passes the time.
import type { ProtocolVersion } from '../upstream/a2a-wire.js'

/** the first wait after a refusal */
export const VERSION_RETRY_FIRST_MS = 5_000
/** the longest wait, reached after six refused probes in a row */
export const VERSION_RETRY_MAX_MS = 300_000

/** the versions whose wire defines -32009 (VersionNotSupported); on another it is an ordinary error code */
export const REFUSAL_DEFINED: ReadonlySet<ProtocolVersion> = new Set(['1.0'])

export interface VersionBackoff {
  /** a -32009 over this version at `now`: true when it starts a refusal, false when one is running */
  refuse: (version: ProtocolVersion, now: number) => boolean
  /** when the version's refusal ends, or undefined when it is not refused at `now` */
  refusedUntil: (version: ProtocolVersion, now: number) => number | undefined
  /** a valid answer over the version: its next refusal waits the first delay */
  answered: (version: ProtocolVersion, now: number) => void
  /** the card changed: nothing it said before is refused */
  clear: () => void
}

export function createVersionBackoff (): VersionBackoff {
  const waits = new Map<ProtocolVersion, { until: number; waitMs: number }>()
  return {
    refuse: (version, now) => {
      const w = waits.get(version)
      if (w !== undefined && now < w.until) return false
      const waitMs = w === undefined ? VERSION_RETRY_FIRST_MS : Math.min(w.waitMs * 2, VERSION_RETRY_MAX_MS)
      waits.set(version, { until: now + waitMs, waitMs })
      return true
    },
    refusedUntil: (version, now) => {
      const w = waits.get(version)
      return w !== undefined && now < w.until ? w.until : undefined
    },
    answered: (version, now) => {
      const w = waits.get(version)
      // an answer to a read sent before the refusal proves nothing about the probe to come
      if (w !== undefined && now >= w.until) waits.delete(version)
    },
    clear: () => { waits.clear() }
  }
}
