// The simulator's mutable state, shared by its routes: the resolved options, what it received,
// the books (faults, tasks, campaign control, held requests, timers; books/), the card
// transforms and signing keys. One object per simulator, so several simulators can run side by
// side in one test process.
import { ControlBook } from './books/control-book.js'
import { FaultBook } from './books/fault-book.js'
import { HeldRequests } from './books/held-requests.js'
import { TaskBook } from './books/task-book.js'
import { Timers } from './books/timers.js'
import { CardSigner } from './cards/card-signing.js'
import type { ResolvedOptions } from './options.js'
import { PROFILES } from './profiles.js'
import type { RpcInput } from './rpc/call.js'
import type { RpcOutcome } from './rpc/outcome.js'
import type { CardRequestCounts, CardSigningOptions, CardTransform, ReceivedRequest } from './types.js'

export interface SimulatorState {
  opts: ResolvedOptions
  /** Set once the server listens; the card's `url` and redirects are built from it. */
  origin: string
  received: ReceivedRequest[]
  faults: FaultBook
  tasks: TaskBook
  control: ControlBook
  /** Requests a `hold` fault parked before the handler. */
  held: HeldRequests<RpcInput, RpcOutcome>
  /** The simulator's own timers (submissions completing on time), cleared on close. */
  timers: Timers
  cardTransform: CardTransform | undefined
  cardAfterSigning: CardTransform | undefined
  /** The signing keys and the signatures of the last card bodies they signed. */
  signer: CardSigner
  /** Card answers by path and status. */
  cardCounts: CardRequestCounts
  /** Aborted on close, so a long injected delay or a held request cannot hold the server open. */
  closing: AbortController
  /** What `campaign.list` answers now. */
  campaigns: Array<Record<string, unknown>>
}

export function createState (opts: ResolvedOptions, signing?: CardSigningOptions): SimulatorState {
  const closing = new AbortController()
  return {
    opts,
    origin: '',
    received: [],
    faults: new FaultBook(),
    tasks: new TaskBook(PROFILES[opts.profile]),
    control: new ControlBook(opts.control?.clock ?? Date.now),
    held: new HeldRequests(closing.signal),
    timers: new Timers(closing.signal),
    cardTransform: opts.initialCard,
    cardAfterSigning: opts.initialCardAfterSigning,
    signer: new CardSigner(signing),
    cardCounts: {},
    closing,
    campaigns: opts.campaigns
  }
}
