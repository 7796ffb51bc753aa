// How the bin reaches a gateway (docs/design.md#finding-unresolved): it carries an admin's
// token, so over https — the certificate checked, whatever NODE_TLS_REJECT_UNAUTHORIZED says —
// or over plain http to loopback only, the rule OPENOPERATOR_URL follows (src/core/upstream-url.ts).
// A URL that breaks it is refused before any lookup or connection, so the token never leaves.
import { Agent, setGlobalDispatcher } from 'undici'
import { isLoopbackHost } from '../core/upstream-url.js'

export const PLAIN_HTTP_RULE = 'plain http:// is accepted to loopback only (127.0.0.0/8, ::1, localhost): the token would cross the network unencrypted; use https://'

/** why the bin may not send a token to this URL, or undefined */
export function gatewayUrlProblem (url: URL): string | undefined {
  if (url.protocol === 'https:') return undefined
  if (url.protocol !== 'http:') return 'must be http:// or https://'
  return isLoopbackHost(url.hostname) ? undefined : PLAIN_HTTP_RULE
}

/**
 * why the bin cannot call the gateway at `base` with the token from the environment (a usage
 * error, exit 2), or undefined: the URL parses, may carry a token, and the token is set
 */
export function targetProblem (base: string, token: string | undefined): string | undefined {
  let url: URL
  try { url = new URL(base) } catch { return '--url / GATEWAY_URL is not a URL' }
  const problem = gatewayUrlProblem(url)
  if (problem !== undefined) return `--url / GATEWAY_URL: ${problem}`
  if (token === undefined || token === '') return 'GATEWAY_TOKEN is not set: the token is read from the environment only (arguments show in `ps`)'
  return undefined
}

/**
 * Every request of this process checks the server's certificate against Node's roots (plus
 * NODE_EXTRA_CA_CERTS, the way to trust a private CA), even with NODE_TLS_REJECT_UNAUTHORIZED=0.
 */
export function verifiedTlsOnly (): void {
  setGlobalDispatcher(new Agent({ connect: { rejectUnauthorized: true } }))
}
