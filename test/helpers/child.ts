// The bin as a child process, for tests that start, kill and restart it: `start` with a clean
// environment (PATH and HOME plus what the test gives), stdout and stderr captured. Or the
// crash child (crash-child.ts): the same start, able to freeze at a step of a mutation. Or the
// descriptor child (fd-child.ts): the same start, able to use up its descriptors on command. A
// child may run under `prlimit --nofile=N:N` (a lower open-file limit).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterEach } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))

export interface GatewayChild { child: ChildProcess; out: () => string; err: () => string; exited: Promise<number | null> }

export interface ChildOptions {
  /** run under `prlimit --nofile=N:N` */
  nofile?: number
  /** an IPC channel (`child.send`, `process.on('message')` in the child) */
  ipc?: boolean
}

export function prlimitAvailable (): boolean {
  return spawnSync('prlimit', ['--version'], { stdio: 'ignore' }).status === 0
}

const children: ChildProcess[] = []
afterEach(() => { for (const c of children.splice(0)) c.kill('SIGKILL') })

export function startGatewayChild (env: Record<string, string>, o: ChildOptions = {}): GatewayChild {
  return spawnChild(['src/cli/index.ts', 'start'], env, o)
}

/** the bin with these arguments (a command and its own), the same clean environment */
export function startBin (args: string[], env: Record<string, string> = {}): GatewayChild {
  return spawnChild(['src/cli/index.ts', ...args], env)
}

/** the gateway started by test/helpers/fd-child.ts: over IPC, 'fill' opens descriptors until none is left, 'release' closes them */
export function startFdChild (env: Record<string, string>, o: ChildOptions = {}): GatewayChild {
  return spawnChild(['test/helpers/fd-child.ts'], env, { ...o, ipc: true })
}

/** the gateway started by test/helpers/crash-child.ts: env CRASH_AT (and CRASH_REQUEST_ID) set its trap */
export function startCrashChild (env: Record<string, string>): GatewayChild {
  return spawnChild(['test/helpers/crash-child.ts'], env)
}

function spawnChild (args: string[], env: Record<string, string>, o: ChildOptions = {}): GatewayChild {
  const node = [process.execPath, '--import', 'tsx', ...args]
  const argv = o.nofile === undefined ? node : ['prlimit', `--nofile=${o.nofile}:${o.nofile}`, ...node]
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: o.ipc === true ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe']
  })
  children.push(child)
  let out = ''
  let err = ''
  child.stdout!.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr!.on('data', (d: Buffer) => { err += d.toString() })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, out: () => out, err: () => err, exited }
}

export async function waitFor<T> (fn: () => T | undefined, ms: number, what = 'a condition'): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = fn()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** the API URL the child logs once it listens */
export const listenUrlOf = async (c: GatewayChild): Promise<string> =>
  await waitFor(() => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(c.out())?.[1], 15_000, 'the gateway to listen')
