// The operator's console's build (docs/operating.md#console): `npm run build` runs it after the
// gateway's tsc, writing dist/console/, which src/console/plugin.ts serves at /console/. Nothing
// inline and nothing from elsewhere, so the console's Content-Security-Policy can allow 'self'
// alone: no module-preload polyfill (it is an inline-free chunk anyway, but unneeded: one entry),
// no asset turned into a data: URI, and the ambiguous-write runbook shipped beside the page,
// verbatim, so the console links to the steps it names without reaching outside the gateway.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

const here = fileURLToPath(new URL('.', import.meta.url))
const RUNBOOK = fileURLToPath(new URL('../docs/runbooks/ambiguous-write.md', import.meta.url))

export default defineConfig({
  root: here,
  base: '/console/',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/console/', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false
  },
  plugins: [{
    name: 'console-runbook',
    generateBundle () {
      this.emitFile({ type: 'asset', fileName: 'runbooks/ambiguous-write.md', source: readFileSync(RUNBOOK, 'utf8') })
    }
  }]
})
