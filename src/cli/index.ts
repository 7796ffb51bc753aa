#!/usr/bin/env node
// The bin: one table of commands (COMMANDS), each with its summary, its usage and its run.
// `start` (the default) runs the gateway, `simulator` the OpenOperator simulator alone, `qualify`
// the read-only deployment smoke (docs/design.md#qualification), `ledger` the ledger's
// operations, `requests`/`reconcile`/`acknowledge`/`controllers`/`callers` an operator's calls to a running gateway;
// `help [command]`, `--help`/`-h` and `<command> --help` print usage on stdout, exit
// 0. Configuration errors are printed (never a secret) and exit 1 (`qualify`: 2); an unknown
// command or an argument a command does not take is one line and the usage on stderr, exit 2.
// Each command loads its code when it runs (or its usage is asked for), so help is quick.
import closeWithGrace from 'close-with-grace'

/** after the drain's grace: destroying the upstream pools, closing the ledger and the metrics listener */
const CLOSE_AFTER_GRACE_MS = 5000

const BIN = 'openoperator-gateway'

interface Command {
  /** one line of the overview */
  summary: string
  /** what `help <command>` and `<command> --help` print; a command whose text lives in its own module loads it */
  usage: string | (() => Promise<string>)
  /** the command itself, given the arguments after its name; sets process.exitCode or exits */
  run: (args: string[]) => Promise<void>
}

/** a caller's argument, fit to print in one line */
const shown = (arg: string): string => arg.replace(/[^\x21-\x7e]/g, '?').slice(0, 64)

const usageOf = async (c: Command): Promise<string> => typeof c.usage === 'string' ? c.usage : await c.usage()

/** for a command that takes no arguments: refuses any, with its usage, exit 2 */
async function noArguments (name: string, args: string[]): Promise<void> {
  if (args.length === 0) return
  console.error(`${name}: unexpected argument "${shown(args[0]!)}"\n${await usageOf(COMMANDS[name]!)}`)
  process.exit(2)
}

async function start (args: string[]): Promise<void> {
  await noArguments('start', args)
  const { ConfigError, loadConfig } = await import('../config/index.js')
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
  const { startGatewayServer } = await import('../server.js')
  const gw = await startGatewayServer(config)
  // SIGHUP re-reads GATEWAY_CALLERS_FILE (docs/operating.md#callers); without a handler Node would exit
  process.on('SIGHUP', () => {
    if (config.callersFile === undefined) gw.logger.warn('SIGHUP: the callers are inline (GATEWAY_CALLERS), nothing to reload; use GATEWAY_CALLERS_FILE to reload without a restart')
    else void gw.reloadCallers()
  })
  // the drain waits up to the grace for requests in flight (docs/design.md#shutdown); past it
  // plus the time to close the pools and the ledger, the process gives up and exits 1
  const log = gw.logger
  closeWithGrace({
    // SIGHUP reloads the callers (above) instead of draining the process
    skip: ['SIGHUP'],
    delay: config.shutdownGraceMs + CLOSE_AFTER_GRACE_MS,
    logger: { error: (m: unknown) => { log.error({ detail: String(m) }, 'shutdown failed') } },
    onTimeout: (delay) => { log.error({ delay }, 'shutdown did not finish in time') },
    onSecondSignal: (signal) => { log.error({ signal }, 'second signal while draining: exiting now') }
  }, async ({ signal, err }) => {
    if (err !== undefined) log.error({ err }, 'shutting down after an error')
    else log.info({ signal }, 'shutting down')
    await gw.close()
  })
}

async function simulator (args: string[]): Promise<void> {
  await noArguments('simulator', args)
  const { SIMULATOR_PROFILES } = await import('../config/index.js')
  const { DEFAULT_SOURCE_SHA, SIMULATOR_PROTOCOLS, simulatorEnvOptions, startSimulator } = await import('../simulator/index.js')
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
  // the same reading as the embedded default's (src/config/simulator.ts), so a bad value reads the same
  const env = simulatorEnvOptions(process.env, profile === 'campaign-control')
  if (!env.ok) {
    console.error(`invalid configuration:\n${env.problems.map((p) => `  - ${p}`).join('\n')}`)
    process.exit(1)
  }
  const { faults, completeAfterMs } = env.options
  const campaignControl = profile === 'campaign-control' ? { completeAfterMs } : undefined
  const sim = await startSimulator({ host: process.env.HOST ?? '127.0.0.1', port, secret, profile: profile as typeof SIMULATOR_PROFILES[number], protocol: protocol as typeof SIMULATOR_PROTOCOLS[number], faults, campaignControl })
  console.log(`simulator (${profile}) listening on ${sim.url}; JSON-RPC at ${sim.url}/a2a/${secret === undefined ? ' (no auth)' : ''}`)
  console.log(`faults in force: ${faults.length === 0 ? 'none' : faults.map((f) => f.text).join(',')}; set, list or clear them from this machine: ${sim.url}/_sim/faults`)
  // the commit qualify expects is the simulator's fixed one: printed so nobody has to find it
  // (docs/operating.md#simulator); a real deployment's comes from its repository, never from itself
  console.log(secret === undefined
    ? 'to qualify it, start it with SIMULATOR_SECRET set: qualification needs a credential'
    : `qualify it: OPENOPERATOR_URL=${sim.url} SPYNEL_AGENT_ZERO_API_KEY=<SIMULATOR_SECRET> EXPECTED_SOURCE_SHA=${DEFAULT_SOURCE_SHA} npm run qualify`)
  closeWithGrace({ delay: 5_000 }, async () => { await sim.close() })
}

/** `requests`, `reconcile`, `acknowledge`: an operator's calls to a running gateway's REST API (docs/runbooks/ambiguous-write.md), one usage for the three */
function operatorCommand (name: 'requests' | 'reconcile' | 'acknowledge', summary: string): Command {
  return {
    summary,
    usage: async () => (await import('./requests-command.js')).USAGE,
    run: async (args) => {
      const { runRequestsCommand } = await import('./requests-command.js')
      // the token goes to the gateway only after its certificate is checked (docs/design.md#finding-unresolved)
      ;(await import('./gateway-transport.js')).verifiedTlsOnly()
      process.exitCode = await runRequestsCommand(name, args, process.env, {
        out: (line) => { process.stdout.write(`${line}\n`) },
        err: (line) => { process.stderr.write(`${line}\n`) }
      })
    }
  }
}

/** every command of the bin, in the overview's order; a new command is one entry here */
const COMMANDS: Record<string, Command> = {
  start: {
    summary: 'run the gateway (the default command)',
    usage: `usage: ${BIN} [start]
  Runs the gateway. Its configuration comes from the environment (docs/operating.md#configuration);
  a bad value prints every problem and exits 1. With none, outside production, it runs against
  the embedded simulator, listens on 127.0.0.1 only (HOST=0.0.0.0: every interface) and prints
  a development token.
  SIGTERM or SIGINT drains the requests in flight, then exits 0. SIGHUP re-reads
  GATEWAY_CALLERS_FILE (a bad file keeps the callers in use).`,
    run: start
  },
  simulator: {
    summary: 'run the OpenOperator simulator alone',
    usage: async () => {
      const { SIMULATOR_PROFILES } = await import('../config/index.js')
      const { DEFAULT_TASK_SECONDS, SIMULATOR_PROTOCOLS } = await import('../simulator/index.js')
      return `usage: ${BIN} simulator
  Runs the OpenOperator A2A simulator alone (docs/operating.md#simulator).
  SIMULATOR_PORT     listen port (default PORT, else 8090)
  HOST               listen address (default 127.0.0.1)
  SIMULATOR_SECRET   the credential POST /a2a/ requires (default SPYNEL_AGENT_ZERO_API_KEY; unset: none)
  SIMULATOR_PROFILE  ${SIMULATOR_PROFILES.join(', ')} (default openoperator)
  SIMULATOR_PROTOCOL ${SIMULATOR_PROTOCOLS.join(', ')} (default v0.3)
  SIMULATOR_FAULTS   faults from the start: <kind>[=<value>]@<target>[:<times>], comma separated,
                     e.g. drop-after-apply@submit:1 (docs/operating.md#simulator-faults)
  SIMULATOR_TASK_SECONDS  campaign-control: seconds until a submitted task is completed
                     (default ${DEFAULT_TASK_SECONDS}; 0 or off: it stays working)
  At run time, from this machine only: GET, POST, DELETE /_sim/faults on the simulator's port.`
    },
    run: simulator
  },
  qualify: {
    summary: 'the read-only smoke of a live OpenOperator deployment',
    usage: async () => `${(await import('../qualify/command.js')).USAGE}\n  Exits 0 when nothing FAILed, 1 when something did, 2 for a usage or configuration error.`,
    run: async (args) => {
      // the smoke stands apart from the gateway: it imports no control or ledger code (docs/design.md#walls)
      const { runQualifyCommand } = await import('../qualify/command.js')
      process.exitCode = await runQualifyCommand(args, process.env, {
        out: (line) => { process.stdout.write(`${line}\n`) },
        err: (line) => { process.stderr.write(`${line}\n`) }
      })
    }
  },
  ledger: {
    summary: 'migrate, export or back up the mutation ledger',
    usage: async () => (await import('./ledger-command.js')).USAGE,
    run: async (args) => {
      const { runLedgerCommand } = await import('./ledger-command.js')
      process.exitCode = await runLedgerCommand(args, process.env, {
        out: (chunk) => process.stdout.write(chunk),
        drain: async () => { await new Promise((resolve) => process.stdout.once('drain', resolve)) },
        err: (line) => { process.stderr.write(`${line}\n`) }
      })
    }
  },
  requests: operatorCommand('requests', 'list the unresolved mutation records, through a running gateway'),
  reconcile: operatorCommand('reconcile', 'ask the remote whether an ambiguous request was applied, through a running gateway'),
  acknowledge: operatorCommand('acknowledge', 'record an admin\'s decision on an ambiguous request, through a running gateway'),
  controllers: {
    summary: 'list or remove the controller ids bound to a caller identity, through a running gateway',
    usage: async () => (await import('./controllers-command.js')).USAGE,
    run: async (args) => {
      const { runControllersCommand } = await import('./controllers-command.js')
      // an admin's token, so the same transport rule as the operator commands (docs/design.md#finding-unresolved)
      ;(await import('./gateway-transport.js')).verifiedTlsOnly()
      process.exitCode = await runControllersCommand(args, process.env, {
        out: (line) => { process.stdout.write(`${line}\n`) },
        err: (line) => { process.stderr.write(`${line}\n`) }
      })
    }
  },
  callers: {
    summary: 'list the callers, their scopes and their grants per campaign and project, through a running gateway',
    usage: async () => (await import('./callers-command.js')).USAGE,
    run: async (args) => {
      const { runCallersCommand } = await import('./callers-command.js')
      // an admin's token, so the same transport rule as the operator commands (docs/design.md#finding-unresolved)
      ;(await import('./gateway-transport.js')).verifiedTlsOnly()
      process.exitCode = await runCallersCommand(args, process.env, {
        out: (line) => { process.stdout.write(`${line}\n`) },
        err: (line) => { process.stderr.write(`${line}\n`) }
      })
    }
  },
  help: {
    summary: 'list the commands, or print one command\'s usage: help <command>',
    usage: `usage: ${BIN} help [command]\n  Lists the commands, or prints the usage of one (as ${BIN} <command> --help does).`,
    run: async (args) => {
      console.log(args[0] === undefined ? overview() : await usageOf(find(args[0])))
    }
  }
}

function overview (): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length)) + 2
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}${c.summary}`)
  return `usage: ${BIN} [command] [arguments]\n\ncommands:\n${lines.join('\n')}\n\n` +
    `${BIN} help <command> (or <command> --help) prints a command's usage.\n` +
    'The configuration comes from the environment: docs/operating.md#configuration.'
}

/** the named command, else a one-line error and the overview on stderr, exit 2 */
function find (name: string): Command {
  if (Object.hasOwn(COMMANDS, name)) return COMMANDS[name]!
  console.error(`unknown command "${shown(name)}"\n\n${overview()}`)
  process.exit(2)
}

const HELP_FLAGS = new Set(['--help', '-h'])

async function main (argv: string[]): Promise<void> {
  const [first, ...rest] = argv
  if (first !== undefined && HELP_FLAGS.has(first)) {
    console.log(overview())
    return
  }
  const command = find(first ?? 'start')
  if (rest[0] !== undefined && HELP_FLAGS.has(rest[0])) {
    console.log(await usageOf(command))
    return
  }
  await command.run(rest)
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error('fatal:', err instanceof Error ? err.message : String(err))
  process.exit(1)
})
