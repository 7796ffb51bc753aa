// Every dependency with an install script has been reviewed (docs/operating.md#install, "The
// install-scripts notice"): an npm that enforces allowScripts would otherwise fail the install, or skip
// better-sqlite3's native build and leave the ledger without its driver.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))
const read = (f: string): Record<string, unknown> => JSON.parse(readFileSync(`${root}${f}`, 'utf8')) as Record<string, unknown>

describe('allowScripts', () => {
  const allow = read('package.json').allowScripts as Record<string, boolean>
  const lock = read('package-lock.json').packages as Record<string, { hasInstallScript?: boolean }>
  const withScripts = [...new Set(Object.entries(lock).filter(([, p]) => p.hasInstallScript === true).map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)))]

  it('covers every package of the lockfile that has an install script, by name', () => {
    expect(withScripts).toContain('better-sqlite3')
    for (const name of withScripts) expect(typeof allow[name], name).toBe('boolean')
  })

  it('allows the native build the ledger needs, with name-only entries (the lockfile records no tarball URL to verify a pin against)', () => {
    expect(allow['better-sqlite3']).toBe(true)
    for (const key of Object.keys(allow)) expect(key, key).toMatch(/^(@[^/@]+\/)?[^/@]+$/)
    // and lists nothing that no longer has a script
    for (const key of Object.keys(allow)) expect(withScripts, key).toContain(key)
  })
})
