// The console as `npm run build` makes it: Vite with console/vite.config.ts, in a child process,
// writing dist/console/ — the folder the gateway serves (src/console/plugin.ts). The browser test
// builds it first, so it drives the page of the source it runs with (CI runs `npm test` without a
// build). Measured as it is shipped: the page and what it loads, gzipped.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { gzipSync } from 'node:zlib'

export const ROOT = fileURLToPath(new URL('../../', import.meta.url))
export const BUILT = join(ROOT, 'dist', 'console')

export async function buildConsole (): Promise<void> {
  await promisify(execFile)(process.execPath, [join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', 'console/vite.config.ts'], { cwd: ROOT })
}

/** the page and every file it references (its script, its stylesheet, its icon), each gzipped at level 9 */
export function shippedSizes (): Array<{ file: string; bytes: number; gzipped: number }> {
  const html = readFileSync(join(BUILT, 'index.html'))
  const refs = [...html.toString().matchAll(/(?:src|href)="\/console\/([^"]+)"/g)].map((m) => m[1]!)
  return ['index.html', ...refs].map((file) => {
    const bytes = readFileSync(join(BUILT, file))
    return { file, bytes: bytes.length, gzipped: gzipSync(bytes, { level: 9 }).length }
  })
}
