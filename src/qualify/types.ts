// The qualification's result model (docs/design.md#qualification): one named assertion, its
// status, and a reason the tool wrote itself — never text taken from the remote.

export type Status = 'PASS' | 'FAIL' | 'SKIP'

export interface Result {
  name: string
  status: Status
  /** present for FAIL and SKIP (and a PASS that reports what it found); written by the tool, one line */
  reason?: string
}

export const pass = (name: string, reason?: string): Result => reason === undefined ? { name, status: 'PASS' } : { name, status: 'PASS', reason }
export const fail = (name: string, reason: string): Result => ({ name, status: 'FAIL', reason })
export const skip = (name: string, reason: string): Result => ({ name, status: 'SKIP', reason })

/** A failure of the probe itself (network, TLS, timeout, cap); its message is the tool's own words. */
export class ProbeFailure extends Error {
  constructor (readonly reason: string) {
    super(reason)
    this.name = 'ProbeFailure'
  }
}
