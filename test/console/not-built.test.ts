// The console's plugin when `npm run build` has not written dist/console/ (a fresh clone started
// another way, a build that failed): the gateway still starts, and /console/ answers 404 saying
// how to build it, with the console's headers — never a 500. And where the built folder is found:
// from the source (tsx, tests) and from the build (dist/src/console/) alike.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import { describe, expect, it, onTestFinished } from 'vitest'
import operatorConsole, { CONSOLE_CSP, NOT_BUILT, builtConsoleDir } from '../../src/console/plugin.js'
import errorHandler from '../../src/http/error-handler.js'
import { ROOT } from './build.js'

describe('the console, not built', () => {
  it('answers 404 with how to build it, and its headers, on every path of it', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'oogw-console-empty-'))
    const warnings: string[] = []
    const app = Fastify({ logger: { level: 'warn', stream: { write: (l: string) => { warnings.push(l) } } } })
    onTestFinished(async () => { await app.close(); rmSync(empty, { recursive: true, force: true }) })
    await app.register(errorHandler)
    await app.register(operatorConsole, { root: empty })
    await app.ready()
    for (const url of ['/console', '/console/', '/console/assets/index.js', '/console/runbooks/ambiguous-write.md']) {
      const res = await app.inject({ url })
      expect([res.statusCode, res.json()], url).toEqual([404, { error: { code: 'not_found', message: NOT_BUILT, retryable: false } }])
      expect(res.headers['content-security-policy'], url).toBe(CONSOLE_CSP)
    }
    expect(NOT_BUILT).toContain('npm run build')
    // said once, at start
    expect(warnings.filter((l) => l.includes('the console is not built'))).toHaveLength(1)
  })

  it('finds dist/console/ of the package, from the source and from the build', () => {
    expect(builtConsoleDir(join(ROOT, 'src', 'console'))).toBe(join(ROOT, 'dist', 'console'))
    expect(builtConsoleDir(join(ROOT, 'dist', 'src', 'console'))).toBe(join(ROOT, 'dist', 'console'))
  })
})
