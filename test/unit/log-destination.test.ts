// The logger's own standard output (docs/design.md#hot-path): lines handed to sonic-boom as bytes
// in its buffer mode. What must hold however the lines are batched: every line arrives whole, in
// order, its multi-byte characters intact (a byte count taken from a string's length would cut
// them), the scrub still applied, and nothing lost at a normal exit. A real child process writing
// to a real pipe, faster than the pipe drains.
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

describe('the standard output of the logger', () => {
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
})
