// Timers the simulator sets for itself (a submitted task completing after a while): unref'd, so
// they never keep a process alive, and all cleared when the simulator closes, so nothing runs
// against a closed simulator.
export class Timers {
  private readonly pending = new Set<NodeJS.Timeout>()

  constructor (private readonly closing: AbortSignal) {
    closing.addEventListener('abort', () => this.clear())
  }

  /** Runs `fn` once after `ms`, unless the simulator closes first. */
  after (ms: number, fn: () => void): void {
    if (this.closing.aborted) return
    const timer = setTimeout(() => {
      this.pending.delete(timer)
      fn()
    }, ms)
    timer.unref()
    this.pending.add(timer)
  }

  /** How many are waiting (tests check that close leaves none). */
  get size (): number {
    return this.pending.size
  }

  private clear (): void {
    for (const timer of this.pending) clearTimeout(timer)
    this.pending.clear()
  }
}
