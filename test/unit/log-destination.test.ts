// The logger's own standard output (docs/design.md#hot-path): lines handed to sonic-boom as bytes
// in its buffer mode, a batch at a time. What must hold however the lines are batched: every line
// arrives whole, in order, its multi-byte characters intact (a byte count taken from a string's
// length would cut them), the scrub still applied, and nothing lost at a normal exit nor at
// process.exit. A real child process writing to a real pipe, faster than the pipe drains. And what waits in the batch (below 4 KB) is not held
// past the flush delay: a quiet gateway's line still reaches the collector.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const LINES = 5000
const SECRET = 'dest-secret-5c0e8a91f2d74b36'

const program = `
import { createLogger } from './src/core/logger.ts'
const log = createLogger({ level: 'info', secrets: new Set([${JSON.stringify(SECRET)}]) })
for (let i = 0; i < ${LINES}; i++) log.info({ i, text: 'naïve – 日本語 ' + 'é'.repeat(i % 50) + ' 🚀', leak: i % 100 === 0 ? ${JSON.stringify(SECRET)} : undefined }, 'line')
`

describe('the standard output of the logger', { tags: ['slow'] }, () => {
  it('writes every line whole and in order, multi-byte text intact, the secret scrubbed', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    child.stdout.on('data', (b: Buffer) => out.push(b))
    let err = ''
    child.stderr.on('data', (b: Buffer) => { err += String(b) })
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
    expect(err).toBe('')
    expect(code).toBe(0)
    const text = Buffer.concat(out).toString('utf8')
    expect(text).not.toContain(SECRET)
    const lines = text.split('\n').filter((l) => l !== '')
    expect(lines).toHaveLength(LINES)
    lines.forEach((l, i) => {
      const o = JSON.parse(l) as { i: number; text: string; msg: string }
      expect(o.i).toBe(i)
      expect(o.text).toBe('naïve – 日本語 ' + 'é'.repeat(i % 50) + ' 🚀')
      expect(o.msg).toBe('line')
    })
  })

  it('writes what waits in the batch when the process exits at once (process.exit: pino flushes synchronously)', async () => {
    const exiting = `
import { createLogger } from './src/core/logger.ts'
const log = createLogger({ level: 'info', secrets: new Set() })
for (let i = 0; i < 10; i++) log.info({ i }, 'before exit')
process.exit(3)
`
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', exiting], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    child.stdout.on('data', (b: Buffer) => out.push(b))
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
    expect(code).toBe(3)
    const lines = Buffer.concat(out).toString('utf8').split('\n').filter((l) => l !== '')
    expect(lines.map((l) => (JSON.parse(l) as { i: number }).i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
  })

  it('writes a lone line within the flush delay, while the process lives on', async () => {
    // one short line, then the process stays up (a ref'd timer) well past the delay
    const lone = `
import { createLogger } from './src/core/logger.ts'
const log = createLogger({ level: 'info', secrets: new Set() })
setTimeout(() => { log.info({ n: 1 }, 'lone'); }, 50)
setTimeout(() => {}, 20_000)
`
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', lone], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    try {
      const started = Date.now()
      const line = await new Promise<string>((resolve, reject) => {
        let text = ''
        child.stdout.on('data', (b: Buffer) => { text += String(b); if (text.includes('\n')) resolve(text) })
        child.once('close', () => { reject(new Error('the child ended first')) })
      })
      expect(JSON.parse(line)).toMatchObject({ n: 1, msg: 'lone' })
      // the line came while the child lives (not at its exit), within the delay plus start-up
      expect(child.exitCode).toBeNull()
      expect(Date.now() - started).toBeLessThan(15_000)
    } finally {
      child.kill('SIGKILL')
    }
  }, 30_000)
})
