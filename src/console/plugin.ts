// The operator's console at /console/ (docs/operating.md#console): the page `npm run build` made
// from console/ (dist/console/), served by the gateway itself — no second server, nothing fetched
// from elsewhere. It is a client of the public REST API like any other: this plugin serves files
// and holds no route of the API, no token and no secret. Encapsulated on purpose (not
// fastify-plugin): the console's headers — a strict Content-Security-Policy first — go on the
// console's answers only, and the API keeps its own. Off with GATEWAY_CONSOLE=false (app.ts does
// not register it). When the built folder is missing the gateway still starts, and /console/
// answers 404 saying how to build it — never a 500.
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { GatewayError } from '../core/errors.js'

/**
 * Scripts, styles, images and calls from the gateway's own origin only: nothing inline (no
 * `<script>` body, no `style=` attribute, no `on…=` handler), nothing from elsewhere, no frame of
 * it anywhere, no form posted, no `<base>`; and, where the browser supports Trusted Types, no
 * string turned into markup at all — the console builds its page with text nodes (console/src/dom.ts)
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'"
].join('; ')

export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  // an answer of the console is stored only where said below: the page itself is revalidated
  'cache-control': 'no-store'
}

export const NOT_BUILT = 'The console is not built: `npm run build` writes it to dist/console/ (the gateway reads it at start).'

/** dist/console/ of the package this module belongs to, from src/console/ (tsx, tests) and dist/src/console/ (the build) alike */
export function builtConsoleDir (from = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir)
    if (up === dir) return join(process.cwd(), 'dist', 'console')
    dir = up
  }
  return join(dir, 'dist', 'console')
}

export interface ConsoleOptions { root?: string }

const operatorConsole: FastifyPluginAsync<ConsoleOptions> = async (app, opts) => {
  const root = opts.root ?? builtConsoleDir()
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(CONSOLE_HEADERS)
    done()
  })

  if (!existsSync(join(root, 'index.html'))) {
    app.log.warn({ root }, 'the console is not built: /console/ answers 404 until `npm run build` and a restart')
    const notBuilt = async (): Promise<never> => { throw new GatewayError('not_found', { message: NOT_BUILT }) }
    app.get('/console', { schema: { hide: true } }, notBuilt)
    app.get('/console/*', { schema: { hide: true } }, notBuilt)
    return
  }

  await app.register(fastifyStatic, {
    root,
    prefix: '/console',
    // /console → /console/
    redirect: true,
    index: 'index.html',
    dotfiles: 'ignore',
    decorateReply: false,
    cacheControl: false,
    setHeaders: (reply: FastifyReply, path: string) => {
      // Vite names each asset by its content's hash: kept for a year. The page and the runbook
      // are revalidated (ETag), so a new build shows at the next load
      reply.header('cache-control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache')
      // shown as text by the browser, not offered as a download
      if (path.endsWith('.md')) reply.header('content-type', 'text/plain; charset=utf-8')
    }
  })
}

export default operatorConsole
