// docker/prune-node-modules.sh, the image's last step on its production dependencies
// (docs/operating.md#docker): run on a node_modules laid out like the image's, it removes source
// maps, TypeScript files and better-sqlite3's compiler leftovers, and keeps every file a module
// loads — JavaScript in all its forms, JSON, licences, the addon.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'

const SCRIPT = fileURLToPath(new URL('../../docker/prune-node-modules.sh', import.meta.url))

let dir: string | undefined
afterEach(() => { if (dir !== undefined) rmSync(dir, { recursive: true, force: true }); dir = undefined })

function tree (files: string[]): string {
  dir = mkdtempSync(join(tmpdir(), 'gw-prune-'))
  for (const f of files) {
    mkdirSync(dirname(join(dir, f)), { recursive: true })
    writeFileSync(join(dir, f), 'x')
  }
  return dir
}

function files (root: string): string[] {
  const out: string[] = []
  const walk = (d: string): void => {
    for (const e of readdirSync(d)) {
      const p = join(d, e)
      if (statSync(p).isDirectory()) walk(p)
      else out.push(relative(root, p))
    }
  }
  walk(root)
  return out.sort()
}

const KEPT = [
  'node_modules/@opentelemetry/sdk-node/build/src/index.js',
  'node_modules/@opentelemetry/sdk-node/build/esm/index.js',
  'node_modules/@opentelemetry/sdk-node/package.json',
  'node_modules/@opentelemetry/sdk-node/LICENSE',
  'node_modules/zod/v4/index.cjs',
  'node_modules/zod/v4/index.mjs',
  'node_modules/fastify/fastify.js',
  'node_modules/fastify/types.ts.js',
  'node_modules/better-sqlite3/package.json',
  'node_modules/better-sqlite3/lib/index.js',
  'node_modules/better-sqlite3/build/Release/better_sqlite3.node'
].sort()

const REMOVED = [
  'node_modules/@opentelemetry/sdk-node/build/src/index.js.map',
  'node_modules/@opentelemetry/sdk-node/build/src/index.d.ts',
  'node_modules/@types/node/index.d.ts',
  'node_modules/zod/src/v4/index.ts',
  'node_modules/zod/v4/index.d.cts',
  'node_modules/zod/v4/index.d.mts',
  'node_modules/fastify/types/instance.d.ts',
  'node_modules/better-sqlite3/build/Release/obj.target/better_sqlite3/src/better_sqlite3.o',
  'node_modules/better-sqlite3/build/Release/obj/gen/sqlite3/sqlite3.c',
  'node_modules/better-sqlite3/build/Release/sqlite3.a',
  'node_modules/better-sqlite3/build/Release/test_extension.node',
  'node_modules/better-sqlite3/build/Makefile',
  'node_modules/better-sqlite3/deps/sqlite3/sqlite3.c',
  'node_modules/better-sqlite3/src/better_sqlite3.cpp'
]

describe('docker/prune-node-modules.sh', () => {
  it('removes maps, TypeScript files and the addon\'s build leftovers; keeps what loads', () => {
    const root = tree([...KEPT, ...REMOVED])
    const r = spawnSync('sh', [SCRIPT, join(root, 'node_modules')], { encoding: 'utf8' })
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(files(root)).toEqual(KEPT)
  })

  it('leaves better-sqlite3 whole when it holds no built addon (a failed build is not hidden)', () => {
    const root = tree(['node_modules/better-sqlite3/deps/sqlite3/sqlite3.c', 'node_modules/better-sqlite3/lib/index.js'])
    expect(spawnSync('sh', [SCRIPT, join(root, 'node_modules')]).status).toBe(0)
    expect(files(root)).toEqual(['node_modules/better-sqlite3/deps/sqlite3/sqlite3.c', 'node_modules/better-sqlite3/lib/index.js'])
  })

  it('refuses a directory that does not exist', () => {
    const r = spawnSync('sh', [SCRIPT, '/nonexistent/node_modules'], { encoding: 'utf8' })
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/no directory/)
  })
})
