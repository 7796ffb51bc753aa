// Late arrivals: POST /a2a/ requests a `hold` fault parked between the remote's front end and
// its handler. Each waits, unapplied and unanswered, until a test delivers it (it then runs as
// if it had just arrived) or drops it (a remote that lost it). Closing the simulator drops them
// all, so close never waits on one. The book keeps each call as it came and runs it through the
// handler it is given, so it knows nothing of JSON-RPC.
import type { HeldRequest } from '../types.js'

/** What became of a held request, for the route still holding its connection. */
export type HeldFate<Outcome> = { kind: 'delivered'; outcome: Outcome } | { kind: 'dropped' }

interface Entry<Input, Outcome> {
  request: HeldRequest
  input: Input
  settle: (fate: HeldFate<Outcome>) => void
}

export class HeldRequests<Input, Outcome> {
  private entries: Array<Entry<Input, Outcome>> = []

  constructor (private readonly closing: AbortSignal) {
    closing.addEventListener('abort', () => this.drop())
  }

  /** Parks a request; resolves once it is delivered or dropped (at once if the simulator is closing). */
  hold (request: HeldRequest, input: Input): Promise<HeldFate<Outcome>> {
    if (this.closing.aborted) return Promise.resolve({ kind: 'dropped' })
    return new Promise((settle) => this.entries.push({ request, input, settle }))
  }

  list (): HeldRequest[] {
    return this.entries.map((e) => ({ ...e.request }))
  }

  /**
   * Runs the matching requests through `handle`, in arrival order, synchronously: each is
   * applied before this returns; only the answers go out later.
   */
  deliver (handle: (input: Input) => Outcome, filter?: (r: HeldRequest) => boolean): number {
    const taken = this.take(filter)
    for (const entry of taken) entry.settle({ kind: 'delivered', outcome: handle(entry.input) })
    return taken.length
  }

  drop (filter?: (r: HeldRequest) => boolean): number {
    const taken = this.take(filter)
    for (const entry of taken) entry.settle({ kind: 'dropped' })
    return taken.length
  }

  // The filter sees every entry before any runs, so a delivery cannot change what was chosen.
  private take (filter: ((r: HeldRequest) => boolean) | undefined): Array<Entry<Input, Outcome>> {
    const taken = this.entries.filter((e) => filter === undefined || filter({ ...e.request }))
    this.entries = this.entries.filter((e) => !taken.includes(e))
    return taken
  }
}
