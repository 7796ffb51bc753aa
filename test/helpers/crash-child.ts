// The gateway as the bin's `start` runs it, with a trap for crash tests: when env CRASH_AT
// names a step of the mutation pipeline (and CRASH_REQUEST_ID, when set, the request), the
// process prints `CRASH-POINT <step> <requestId>` and freezes right there, so the parent's
// SIGKILL lands exactly at that step. Or, with env PAUSE_AT (`<step>@<requestId>`, comma
// separated) and PAUSE_RESUME_DIR, it prints `PAUSE-POINT <step> <requestId>` and stops there
// the same way, but goes on once the file PAUSE_RESUME_DIR/<requestId> exists: the parent can
// stop or crash the database at that exact step, then let the mutation continue. Without
// either it is the bin's `start`.
import { existsSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import closeWithGrace from 'close-with-grace'
import { ConfigError, loadConfig } from '../../src/config/index.js'
import type { MutationStep } from '../../src/control/pipeline.js'
import { startGatewayServer } from '../../src/server.js'

const STEPS: readonly string[] = ['before-pending', 'before-send', 'before-outcome'] satisfies MutationStep[]
/** the parent kills well before this; past it the process kills itself, leaving the same trace */
const FREEZE_MS = 60_000

const crashAt = process.env.CRASH_AT
const crashId = process.env.CRASH_REQUEST_ID
if (crashAt !== undefined && !STEPS.includes(crashAt)) {
  console.error(`CRASH_AT must be one of ${STEPS.join(', ')}`)
  process.exit(2)
}
const pauses = new Set((process.env.PAUSE_AT ?? '').split(',').filter((p) => p !== ''))
const resumeDir = process.env.PAUSE_RESUME_DIR
if ([...pauses].some((p) => !STEPS.includes(p.split('@')[0]!) || !p.includes('@')) || (pauses.size > 0 && resumeDir === undefined)) {
  console.error(`PAUSE_AT must list <step>@<requestId> with a step among ${STEPS.join(', ')}, and PAUSE_RESUME_DIR be set`)
  process.exit(2)
}

function trap (step: MutationStep, requestId: string): void {
  if (pauses.has(`${step}@${requestId}`)) {
    writeSync(1, `PAUSE-POINT ${step} ${requestId}\n`)
    const sleeper = new Int32Array(new SharedArrayBuffer(4))
    const end = Date.now() + FREEZE_MS
    // the whole process stays still (as at a crash point) until the parent lets it go on
    while (!existsSync(join(resumeDir!, requestId))) {
      if (Date.now() > end) process.kill(process.pid, 'SIGKILL')
      Atomics.wait(sleeper, 0, 0, 20)
    }
    return
  }
  if (step !== crashAt || (crashId !== undefined && requestId !== crashId)) return
  writeSync(1, `CRASH-POINT ${step} ${requestId}\n`)
  // nothing else runs in this process (no timer, no socket, no ledger write) until the kill
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, FREEZE_MS)
  process.kill(process.pid, 'SIGKILL')
}

async function main (): Promise<void> {
  let config
  try {
    config = loadConfig(process.env)
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message)
      process.exit(1)
    }
    throw err
  }
  const gw = await startGatewayServer(config, crashAt === undefined && pauses.size === 0 ? {} : { onMutationStep: trap })
  const log = gw.logger
  closeWithGrace({
    delay: config.shutdownGraceMs + 5000,
    logger: { error: (m: unknown) => { log.error({ detail: String(m) }, 'shutdown failed') } },
    onTimeout: (delay) => { log.error({ delay }, 'shutdown did not finish in time') },
    onSecondSignal: (signal) => { log.error({ signal }, 'second signal while draining: exiting now') }
  }, async ({ signal, err }) => {
    if (err !== undefined) log.error({ err }, 'shutting down after an error')
    else log.info({ signal }, 'shutting down')
    await gw.close()
  })
}

main().catch((err: unknown) => {
  console.error('fatal:', err instanceof Error ? err.message : String(err))
  process.exit(1)
})
