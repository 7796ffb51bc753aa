// The suite fails on any unhandled rejection (docs/design.md#no-unhandled-rejection): a setup file
// of every run (`shared` in vitest.config.ts). One process listener records each rejection nobody
// handled, and the test running when it surfaced fails — or the next one: a promise an earlier test
// dropped, under `isolate: false` perhaps in another file. Vitest's own listener goes quiet once any
// other is installed (it assumes user code handles the event), so what surfaces after a file's last
// check, with no test left to fail, is thrown on for vitest to report as an error of the run.
import { afterAll, afterEach } from 'vitest'

interface Seen {
  /** reasons since the last check */
  reasons: unknown[]
  /** a check is still to come in the file running: between its setup and its last afterAll */
  armed: boolean
  /** the real ones, taken before any test could fake them */
  turn: typeof setImmediate
  nextTick: typeof process.nextTick
}

// once per process: with `isolate: false` a worker runs this file again for every test file, and a
// listener each time would report every rejection once per file already run
const KEY = Symbol.for('openoperator-gateway.test.unhandled-rejections')
const store = globalThis as typeof globalThis & { [KEY]?: Seen }
const seen = store[KEY] ??= listen()
seen.armed = true

function listen (): Seen {
  const s: Seen = { reasons: [], armed: false, turn: setImmediate, nextTick: process.nextTick.bind(process) }
  process.on('unhandledRejection', (reason) => {
    if (s.armed) s.reasons.push(reason)
    else s.nextTick(() => { throw new Error('an unhandled rejection after the last test of a file', { cause: reason }) })
  })
  return s
}

const summary = (reason: unknown): string => reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason)

async function check (when: string, last: boolean): Promise<void> {
  // a turn of the loop first: a promise rejected just now is reported once the microtasks drain
  await new Promise<void>((resolve) => { seen.turn(resolve) })
  if (last) seen.armed = false
  const reasons = seen.reasons.splice(0)
  if (reasons.length === 0) return
  throw new Error(`${reasons.length} unhandled rejection(s) ${when}: ${reasons.map(summary).join('; ')}`, { cause: reasons[0] })
}

// registered first, so run last (vitest runs after-hooks in reverse): after the file's own cleanup
afterEach(async () => { await check('during this test, or left by an earlier one and surfacing since the last check', false) })
afterAll(async () => { await check('after the last test of this file, in its cleanup', true) })
