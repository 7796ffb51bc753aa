// The image's HEALTHCHECK (docker/Dockerfile), run as Docker runs it — its exec-form words, with the
// container's HOST and PORT — against a real gateway listening where HOST says. HOST naming one
// address (127.0.0.2 here, any loopback address on Linux) must be probed there: 127.0.0.1 is
// refused. HOST naming every interface (0.0.0.0, ::) is probed on loopback; an IPv6 address in
// brackets. No Docker engine is needed: the command is node's, the image's node runs the same.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../../src/simulator/index.js'
import { startGateway } from '../helpers/gateway.js'

const root = fileURLToPath(new URL('../../', import.meta.url))

/** the HEALTHCHECK's exec-form words (its CMD continues on the next line) */
function healthcheckWords (): string[] {
  const lines = readFileSync(join(root, 'docker/Dockerfile'), 'utf8').split('\n')
  const at = lines.findIndex((l) => l.startsWith('HEALTHCHECK '))
  expect(at, 'a HEALTHCHECK instruction').toBeGreaterThanOrEqual(0)
  const cmd = lines[at + 1]!.trim()
  expect(cmd.startsWith('CMD [')).toBe(true)
  return JSON.parse(cmd.slice('CMD '.length)) as string[]
}

/** the health check's exit code, run with this environment (node replaced by this process's node) */
async function probe (env: Record<string, string>): Promise<number | null> {
  const [node, ...args] = healthcheckWords()
  expect(node).toBe('node')
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'ignore' })
  return await new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error('the health check did not exit within 10 s')) }, 10_000)
    child.on('exit', (code) => { clearTimeout(timer); resolve(code) })
  })
}

const portOf = (url: string): string => new URL(url).port

/** whether this machine can listen on ::1 (IPv6 loopback) */
async function ipv6Loopback (): Promise<boolean> {
  const server = createServer()
  return await new Promise((resolve) => {
    server.once('error', () => { resolve(false) })
    server.listen(0, '::1', () => { server.close(() => { resolve(true) }) })
  })
}

describe('docker/Dockerfile HEALTHCHECK', { tags: ['slow'] }, () => {
  let sim: Simulator
  beforeAll(async () => { sim = await startSimulator({ secret: 'healthcheck-test-secret-0123' }) })
  afterAll(async () => { await sim.close() })

  it('HOST naming one address: probed there (127.0.0.1, where nothing listens, would fail)', async () => {
    const gw = await startGateway({ simulator: sim, env: { HOST: '127.0.0.2' } })
    const port = portOf(gw.url)
    expect(new URL(gw.url).hostname).toBe('127.0.0.2')
    expect(await probe({ HOST: '127.0.0.2', PORT: port })).toBe(0)
    // the old check, always 127.0.0.1, is refused by this gateway: HOST=127.0.0.1 stands in for it
    expect(await probe({ HOST: '127.0.0.1', PORT: port })).toBe(1)
    // and another address where nothing listens is a failure, not a hang
    expect(await probe({ HOST: '127.0.0.3', PORT: port })).toBe(1)
  })

  it('HOST naming every interface, or unset (the production default, 0.0.0.0): probed on loopback', async () => {
    // the gateway listens on 127.0.0.1, which a wildcard listener also serves; no wildcard bind in a test
    const gw = await startGateway({ simulator: sim })
    const port = portOf(gw.url)
    for (const host of ['0.0.0.0', '::', '[::]']) expect(await probe({ HOST: host, PORT: port }), host).toBe(0)
    expect(await probe({ PORT: port })).toBe(0)
  })

  it('HOST naming an IPv6 address: probed there, in brackets', async (ctx) => {
    if (!await ipv6Loopback()) {
      console.log('::1 cannot be listened on here (no IPv6 loopback); the IPv6 health check case is skipped')
      ctx.skip()
      return
    }
    const gw = await startGateway({ simulator: sim, env: { HOST: '::1' } })
    const port = portOf(gw.url)
    expect(await probe({ HOST: '::1', PORT: port })).toBe(0)
    expect(await probe({ HOST: '[::1]', PORT: port })).toBe(0)
    // this gateway is not on 127.0.0.1
    expect(await probe({ HOST: '127.0.0.1', PORT: port })).toBe(1)
  })
})
