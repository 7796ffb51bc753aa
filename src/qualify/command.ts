// `openoperator-gateway qualify [--json] [--observer-task ID]` (docs/design.md#qualification):
// reads its configuration from the environment the CLI hands it, runs the smoke, prints, and
// returns the exit code: 0 when nothing FAILed, 1 when something did, 2 for a usage or
// configuration error. It prints no credential and no remote text.
import { QualifyConfigError, loadQualifyConfig, type QualifyEnv } from './config.js'
import { countResults, formatJson, formatLine, scrub } from './report.js'
import { runQualification } from './run.js'

export interface QualifyIo {
  out: (line: string) => void
  err: (line: string) => void
}

export const USAGE = 'usage: openoperator-gateway qualify [--json] [--observer-task ID]\n' +
  '  reads OPENOPERATOR_URL, SPYNEL_AGENT_ZERO_API_KEY (or _FILE), UPSTREAM_AUTH_SCHEME, UPSTREAM_CA_FILE, EXPECTED_SOURCE_SHA'

const TASK_ID = /^[A-Za-z0-9._:-]{1,256}$/

interface Args { json: boolean; observerTask?: string; help: boolean }

function parseArgs (argv: readonly string[]): Args | string {
  const args: Args = { json: false, help: false }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--json') args.json = true
    else if (a === '--help' || a === '-h') args.help = true
    else if (a === '--observer-task' || a.startsWith('--observer-task=')) {
      const value = a === '--observer-task' ? argv[++i] : a.slice('--observer-task='.length)
      if (value === undefined || !TASK_ID.test(value)) return '--observer-task needs a task id (1-256 characters of A-Z a-z 0-9 . _ : -)'
      args.observerTask = value
    } else return `unknown argument "${a.replace(/[^\x21-\x7e]/g, '?').slice(0, 64)}"`
  }
  return args
}

export async function runQualifyCommand (argv: readonly string[], env: QualifyEnv, io: QualifyIo, deps: { readFile?: (path: string) => string } = {}): Promise<number> {
  const args = parseArgs(argv)
  if (typeof args === 'string') {
    io.err(`qualify: ${args}\n${USAGE}`)
    return 2
  }
  if (args.help) {
    io.out(USAGE)
    return 0
  }
  let config
  try {
    config = loadQualifyConfig(env, deps)
  } catch (err) {
    if (err instanceof QualifyConfigError) {
      io.err(`qualify: ${err.message}`)
      return 2
    }
    throw err
  }
  const secrets = [config.secret]
  const out = (line: string): void => io.out(scrub(line, secrets))
  const target = `${config.origin}${config.prefix}`
  for (const w of config.warnings) io.err(`qualify: warning: ${w}`)
  const results = await runQualification(config, {
    observerTask: args.observerTask,
    onResult: args.json ? undefined : (r) => out(formatLine(r))
  })
  if (args.json) out(formatJson(results, target, config.expectedSourceSha))
  const counts = countResults(results)
  io.err(`qualify: ${counts.pass} PASS, ${counts.fail} FAIL, ${counts.skip} SKIP against ${target}`)
  return counts.fail === 0 ? 0 : 1
}
