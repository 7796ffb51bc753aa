// Loaded with `node --import` by test/deploy/loaded-modules.test.ts: every module the process
// resolves — ES modules through a resolve hook, CommonJS through the loader — is appended, one
// file URL or path a line, to MODULE_LOG. A worker thread (pino's transport) inherits the flag
// and writes to the same file. MODULE_LOG_TTY=1 makes stdout say it is a terminal, so the start
// takes the branch it takes on one (src/server.ts: pretty logs outside production).
// Plain JavaScript: the hooks run on their own thread, before any TypeScript loader is there.
import { appendFileSync } from 'node:fs'
import Module, { register } from 'node:module'

const file = process.env.MODULE_LOG
if (file !== undefined && file !== '') {
  register('./module-log-hooks.mjs', import.meta.url, { data: { file } })
  const resolve = Module._resolveFilename
  Module._resolveFilename = function (...args) {
    const found = resolve.apply(this, args)
    appendFileSync(file, `${found}\n`)
    return found
  }
}
if (process.env.MODULE_LOG_TTY === '1') Object.defineProperty(process.stdout, 'isTTY', { value: true })
