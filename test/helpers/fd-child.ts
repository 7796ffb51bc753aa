// The bin's `start` with one test-only hook over IPC (docs/design.md#http-edges): 'fill' opens
// /dev/null until the process has no descriptor left, 'release' closes them again, each answered
// with a message. Descriptor exhaustion can then be made to happen inside the gateway's own
// process, at a moment the test picks, whatever takes the descriptors in production. While
// filled, any descriptor the process frees (a keep-alive socket to the remote timing out) is
// taken again within a few milliseconds, so the exhaustion holds for as long as the test says.
import { closeSync, openSync } from 'node:fs'

const held: number[] = []
let refill: NodeJS.Timeout | undefined

function grab (): string | undefined {
  try {
    for (;;) held.push(openSync('/dev/null', 'r'))
  } catch (err) {
    return (err as NodeJS.ErrnoException).code
  }
}

process.on('message', (m: unknown) => {
  if (m === 'fill') {
    const code = grab()
    refill ??= setInterval(grab, 2)
    process.send?.({ filled: held.length, code })
  } else if (m === 'release') {
    clearInterval(refill)
    refill = undefined
    for (const fd of held.splice(0)) closeSync(fd)
    process.send?.({ released: true })
  }
})

process.argv.splice(2, process.argv.length, 'start')
await import('../../src/cli/index.js')
