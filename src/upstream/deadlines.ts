// One shared deadline mechanism for upstream answers still streaming (docs/design.md#hot-path).
// A per-call AbortSignal.timeout left a timer, a WeakRef and a registry entry behind for every
// exchange, promoted to the old generation: RSS near doubled and full mark-compacts paused the
// loop. Undici's own headersTimeout bounds the wait for the headers; this bounds the body, whose
// bodyTimeout is only an idle bound between chunks (a remote trickling a byte at a time would
// pass it forever). One interval timer, running only while a body is being read, expires each
// watched exchange at most SWEEP_MS after its deadline.

export const SWEEP_MS = 25

export interface Watch { deadline: number; expire: () => void }

export interface DeadlineSweeper {
  /** calls `expire` once `deadline` (ms since epoch) has passed, unless unwatched first */
  watch: (deadline: number, expire: () => void) => Watch
  unwatch: (w: Watch) => void
  close: () => void
}

export function createDeadlineSweeper (periodMs = SWEEP_MS): DeadlineSweeper {
  const watched = new Set<Watch>()
  let timer: NodeJS.Timeout | undefined
  const sweep = (): void => {
    const now = Date.now()
    for (const w of watched) {
      if (w.deadline > now) continue
      watched.delete(w)
      w.expire()
    }
    if (watched.size === 0 && timer !== undefined) {
      clearInterval(timer)
      timer = undefined
    }
  }
  return {
    watch: (deadline, expire) => {
      const w = { deadline, expire }
      watched.add(w)
      if (timer === undefined) {
        timer = setInterval(sweep, periodMs)
        timer.unref()
      }
      return w
    },
    unwatch: (w) => { watched.delete(w) },
    close: () => {
      watched.clear()
      if (timer !== undefined) clearInterval(timer)
      timer = undefined
    }
  }
}
