// The byte budget for large answers held at once (docs/design.md#load-shedding). A `tasks/get`
// answer may be 16 MiB, and the gateway holds it in three forms at once while it parses (the
// chunks, the string, the object graph: together four to five times its size), so many at once
// would take memory without a ceiling. Each
// budgeted exchange reserves its declared size up front, and its streamed size as chunks arrive
// when the declaration is missing or short; past the budget the exchange is abandoned and shed.
// What is reserved is given back once the answer has been parsed and handed on.

export interface ByteBudget {
  /** reserves `bytes` more for `hold`; false (nothing reserved) when the budget would be passed */
  reserve: (hold: Hold, bytes: number) => boolean
  /** gives back everything `hold` reserved */
  release: (hold: Hold) => void
  used: () => number
}

/** what one exchange has reserved */
export interface Hold { bytes: number }

export function createByteBudget (limit: number): ByteBudget {
  let used = 0
  return {
    reserve: (hold, bytes) => {
      if (bytes <= 0) return true
      if (used + bytes > limit) return false
      used += bytes
      hold.bytes += bytes
      return true
    },
    release: (hold) => {
      used -= hold.bytes
      hold.bytes = 0
    },
    used: () => used
  }
}
