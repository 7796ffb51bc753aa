// A PostgreSQL cluster a test owns, so it can stop, crash and restart a real server
// (docs/design.md#ledger): `initdb` on a temporary data directory (trust auth, user
// `postgres`, no fsync: a test's data need not survive the machine, only the server), listening
// on 127.0.0.1 on a free port, driven with `pg_ctl -w`. PostgreSQL refuses to run as root, so as
// root the binaries run as the `postgres` user (`runuser`) on a directory it owns. Find out first
// with `pgClusterUnavailable()`, which names what is missing; `destroy` stops the server and
// removes the directory (an exit handler does the same if the test process dies first).
import { execFile, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'

export interface PgCluster {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string
  port: number
  /** a fast stop (`-m fast`: sessions terminated, a checkpoint) or a crash (`-m immediate`: no checkpoint, recovery at the next start) */
  stop: (mode?: 'fast' | 'immediate') => Promise<void>
  start: () => Promise<void>
  /** whether the server was left running (a test that failed mid-stop leaves it down) */
  running: () => boolean
  /** the server's log so far (for a failure's message) */
  log: () => string
  destroy: () => Promise<void>
}

/** the directory of initdb and pg_ctl: the newest /usr/lib/postgresql/<v>/bin, else PATH */
function binDir (): string | undefined {
  const root = '/usr/lib/postgresql'
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a))
    for (const v of versions) {
      const dir = join(root, v, 'bin')
      if (existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir
    }
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' })
  const initdb = which.status === 0 ? which.stdout.trim() : ''
  if (initdb === '') return undefined
  const dir = initdb.slice(0, initdb.lastIndexOf('/'))
  return existsSync(join(dir, 'pg_ctl')) ? dir : undefined
}

const asRoot = process.getuid?.() === 0

/** the postgres user's uid and gid, when this process is root and must hand it the cluster */
function postgresUser (): { uid: number; gid: number } | undefined {
  const u = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' })
  const g = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' })
  if (u.status !== 0 || g.status !== 0) return undefined
  return { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) }
}

/** why no cluster can be made here, or undefined when one can */
export function pgClusterUnavailable (): string | undefined {
  if (binDir() === undefined) return 'initdb and pg_ctl are neither in /usr/lib/postgresql/*/bin nor on PATH'
  if (!asRoot) return undefined
  if (spawnSync('runuser', ['--version'], { stdio: 'ignore' }).status !== 0) return 'running as root (PostgreSQL refuses root) and runuser is missing'
  if (postgresUser() === undefined) return 'running as root (PostgreSQL refuses root) and there is no postgres user'
  return undefined
}

/** a port nothing listens on now, on 127.0.0.1 (the cluster's, and the test's own redis-server) */
export async function freePort (): Promise<number> {
  const srv = createServer()
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const port = (srv.address() as { port: number }).port
  await new Promise<void>((resolve) => srv.close(() => resolve()))
  return port
}

async function run (argv: string[]): Promise<void> {
  const [file, ...args] = asRoot ? ['runuser', '-u', 'postgres', '--', ...argv] : argv
  await new Promise<void>((resolve, reject) => {
    // async: the simulator and the test's own sockets run in this process meanwhile
    execFile(file!, args, { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err === null) resolve()
      else reject(new Error(`${argv.join(' ')} failed: ${err.message}\n${stdout}${stderr}`))
    })
  })
}

const alive = new Set<() => void>()
process.once('exit', () => { for (const stop of alive) stop() })

/** initdb, then start: about a second on an idle machine */
export async function startPgCluster (): Promise<PgCluster> {
  const bin = binDir()
  if (bin === undefined) throw new Error(pgClusterUnavailable())
  const dir = mkdtempSync('/tmp/oogw-pg-')
  const owner = asRoot ? postgresUser() : undefined
  if (owner !== undefined) chownSync(dir, owner.uid, owner.gid)
  const data = join(dir, 'data')
  const logFile = join(dir, 'server.log')
  const port = await freePort()
  // the socket in the cluster's own directory: nothing shared with the machine's server
  const options = [`-p ${port}`, '-c listen_addresses=127.0.0.1', `-k ${dir}`, '-c fsync=off', '-c full_page_writes=off', '-c max_connections=200'].join(' ')
  const pgCtl = join(bin, 'pg_ctl')
  let running = false
  const stopNow = (): void => {
    if (!running) return
    const argv = [pgCtl, '-D', data, '-m', 'immediate', '-w', 'stop']
    spawnSync(asRoot ? 'runuser' : argv[0]!, asRoot ? ['-u', 'postgres', '--', ...argv] : argv.slice(1), { stdio: 'ignore' })
    running = false
  }
  const remove = (): void => { rmSync(dir, { recursive: true, force: true }) }
  const onExit = (): void => { stopNow(); remove() }
  alive.add(onExit)
  try {
    await run([join(bin, 'initdb'), '-D', data, '--no-sync', '--auth=trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C'])
  } catch (err) {
    alive.delete(onExit)
    remove()
    throw err
  }
  const start = async (): Promise<void> => {
    await run([pgCtl, '-D', data, '-l', logFile, '-o', options, '-w', '-t', '60', 'start'])
    running = true
  }
  const stop = async (mode: 'fast' | 'immediate' = 'fast'): Promise<void> => {
    await run([pgCtl, '-D', data, '-m', mode, '-w', '-t', '60', 'stop'])
    running = false
  }
  try {
    await start()
  } catch (err) {
    onExit()
    alive.delete(onExit)
    throw err
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop,
    start,
    running: () => running,
    log: () => { try { return readFileSync(logFile, 'utf8') } catch { return '' } },
    destroy: async () => {
      alive.delete(onExit)
      try {
        if (running) await stop('immediate')
      } catch {
        stopNow()
      } finally {
        remove()
      }
    }
  }
}
