#!/usr/bin/env node
// The bin entry: `start` (default) runs the gateway, `simulator` runs the OpenOperator
// simulator alone, `qualify` runs the read-only deployment smoke (docs/design.md#qualification).
// Configuration errors are printed (never a secret) and exit 1 (`qualify`: 2).
import closeWithGrace from 'close-with-grace'
import { ConfigError, SIMULATOR_PROFILES, loadConfig } from '../config.js'
import { startGatewayServer } from '../server.js'
import { SIMULATOR_PROTOCOLS, startSimulator, type SimulatorProfile, type SimulatorProtocol } from '../simulator/index.js'

/** after the drain's grace: destroying the upstream pools, closing the ledger and the metrics listener */
const CLOSE_AFTER_GRACE_MS = 5000

async function main (argv: string[]): Promise<void> {
  const command = argv[0] ?? 'start'
  if (command === 'start') {
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
    const gw = await startGatewayServer(config)
    // the drain waits up to the grace for requests in flight (docs/design.md#shutdown); past it
    // plus the time to close the pools and the ledger, the process gives up and exits 1
    const log = gw.logger
    closeWithGrace({
      delay: config.shutdownGraceMs + CLOSE_AFTER_GRACE_MS,
      logger: { error: (m: unknown) => { log.error({ detail: String(m) }, 'shutdown failed') } },
      onTimeout: (delay) => { log.error({ delay }, 'shutdown did not finish in time') },
      onSecondSignal: (signal) => { log.error({ signal }, 'second signal while draining: exiting now') }
    }, async ({ signal, err }) => {
      if (err !== undefined) log.error({ err }, 'shutting down after an error')
      else log.info({ signal }, 'shutting down')
      await gw.close()
    })
    return
  }
  if (command === 'simulator') {
    const port = Number(process.env.SIMULATOR_PORT ?? process.env.PORT ?? 8090)
    const secret = process.env.SIMULATOR_SECRET ?? process.env.SPYNEL_AGENT_ZERO_API_KEY
    const profile = process.env.SIMULATOR_PROFILE ?? 'openoperator'
    if (!(SIMULATOR_PROFILES as readonly string[]).includes(profile)) {
      console.error(`SIMULATOR_PROFILE must be one of ${SIMULATOR_PROFILES.join(', ')}`)
      process.exit(1)
    }
    const protocol = process.env.SIMULATOR_PROTOCOL ?? 'v0.3'
    if (!(SIMULATOR_PROTOCOLS as readonly string[]).includes(protocol)) {
      console.error(`SIMULATOR_PROTOCOL must be one of ${SIMULATOR_PROTOCOLS.join(', ')}`)
      process.exit(1)
    }
    const sim = await startSimulator({ host: process.env.HOST ?? '127.0.0.1', port, secret, profile: profile as SimulatorProfile, protocol: protocol as SimulatorProtocol })
    console.log(`simulator (${profile}) listening on ${sim.url}; JSON-RPC at ${sim.url}/a2a/${secret === undefined ? ' (no auth)' : ''}`)
    closeWithGrace({ delay: 5_000 }, async () => { await sim.close() })
    return
  }
  if (command === 'qualify') {
    // the smoke stands apart from the gateway: it imports no control or ledger code (docs/design.md#walls)
    const { runQualifyCommand } = await import('../qualify/command.js')
    process.exitCode = await runQualifyCommand(argv.slice(1), process.env, {
      out: (line) => { process.stdout.write(`${line}\n`) },
      err: (line) => { process.stderr.write(`${line}\n`) }
    })
    return
  }
  if (command === 'ledger') {
    const { runLedgerCommand } = await import('./ledger-command.js')
    process.exitCode = await runLedgerCommand(argv.slice(1), process.env, {
      out: (chunk) => process.stdout.write(chunk),
      drain: async () => { await new Promise((resolve) => process.stdout.once('drain', resolve)) },
      err: (line) => { process.stderr.write(`${line}\n`) }
    })
    return
  }
  if (command === 'requests' || command === 'reconcile' || command === 'acknowledge') {
    // an operator's commands against a running gateway's REST API (docs/runbooks/ambiguous-write.md)
    const { runRequestsCommand } = await import('./requests-command.js')
    process.exitCode = await runRequestsCommand(command, argv.slice(1), process.env, {
      out: (line) => { process.stdout.write(`${line}\n`) },
      err: (line) => { process.stderr.write(`${line}\n`) }
    })
    return
  }
  console.error(`unknown command "${command}"; use: start | simulator | qualify | ledger`)
  process.exit(2)
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error('fatal:', err instanceof Error ? err.message : String(err))
  process.exit(1)
})
