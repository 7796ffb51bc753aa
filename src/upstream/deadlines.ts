// One shared deadline mechanism for upstream answers still streaming (docs/design.md#hot-path).
// A per-call AbortSignal.timeout left a timer, a WeakRef and a registry entry behind for every
// exchange, promoted to the old generation: RSS near doubled and full mark-compacts paused the
// loop. For a JSON-RPC read it bounds the whole exchange, from dispatch to the last byte, with
// undici's own timers off: each was a FastTimer kept in undici's list for ~0.5 s, promoted
// (docs/design.md#hot-path). For the other exchanges undici's headersTimeout bounds the wait for the
// headers and this the body, whose bodyTimeout is only an idle bound between chunks (a remote
// trickling a byte at a time would pass it forever). One interval timer, running only while
// something is watched, expires each watched exchange at most SWEEP_MS after its deadline.

import { LiveList, type LiveNode } from '../core/live-list.js'

export const SWEEP_MS = 25

/** a watched deadline (ms since epoch, `at`) and what expires it (`item`); the sweeper's list node */
export type Watch = LiveNode<() => void>

export interface DeadlineSweeper {
  /** calls `expire` once `deadline` (ms since epoch) has passed, unless unwatched first */
  watch: (deadline: number, expire: () => void) => Watch
  unwatch: (w: Watch) => void
  close: () => void
}

export function createDeadlineSweeper (periodMs = SWEEP_MS): DeadlineSweeper {
  // a list, not a Set: a Set of the exchanges' closures kept their bodies alive into the old
  // generation (src/core/live-list.ts)
  const watched = new LiveList<() => void>()
  let timer: NodeJS.Timeout | undefined
  const sweep = (): void => {
    const now = Date.now()
    const due: Watch[] = []
    for (const n of watched.nodes()) if (n.at <= now) due.push(n)
    for (const n of due) {
      const expire = n.item
      watched.remove(n)
      expire?.()
    }
    if (watched.size === 0 && timer !== undefined) {
      clearInterval(timer)
      timer = undefined
    }
  }
  return {
    watch: (deadline, expire) => {
      const w = watched.add(expire, deadline)
      if (timer === undefined) {
        timer = setInterval(sweep, periodMs)
        timer.unref()
      }
      return w
    },
    unwatch: (w) => { watched.remove(w) },
    close: () => {
      for (const n of [...watched.nodes()]) watched.remove(n)
      if (timer !== undefined) clearInterval(timer)
      timer = undefined
    }
  }
}
