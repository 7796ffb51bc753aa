// The operator's console (docs/operating.md#console) in a real browser: Debian's Chromium driven by
// playwright-core against the gateway on 127.0.0.1 port 0 with its embedded simulator in
// controller mode, the console built first as `npm run build` builds it. An operator signs in
// with a token and sees the remote; an ambiguous write rehearsed with SIMULATOR_FAULTS shows as a
// blocked campaign with its runbook step, is reconciled from the page and settles; one whose
// reconcile fails is acknowledged with a note; a binding is freed past its live lease, confirmed
// twice. A reader's token sees every page it may read and no action. Markup in the card's name, a
// caller's name and a JWT subject is shown as text and runs nothing; the page asks nothing of any
// other origin; its CSP is on its answers and not on the API's. Each page is photographed into
// test-results/console/ (git-ignored); docs/img/ holds the copies the documents show.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { STEPS } from '../../console/src/runbook.js'
import { sha256Hex } from '../../src/callers/tokens.js'
import { loadConfig, type Env } from '../../src/config/index.js'
import { CONSOLE_CSP } from '../../src/console/plugin.js'
import { startGatewayServer, type RunningGateway } from '../../src/server.js'
import { call } from '../helpers/http.js'
import { rawExchange } from '../helpers/raw-http.js'
import { AUDIENCE, ISSUER, sign, testKey } from '../helpers/jwks.js'
import { CHROMIUM_SKIP, chromiumAvailable, openBrowser, type Browser, type PageWindow } from './browser.js'
import { ROOT, buildConsole, shippedSizes } from './build.js'

const CHROMIUM = chromiumAvailable()
if (!CHROMIUM) console.warn(`SKIP the console in a browser: ${CHROMIUM_SKIP}`)

/** markup in every string the remote or a caller controls; `window.pwned` is set if any of it ever runs */
const CARD_NAME = 'Remote <img src=x onerror="window.pwned=1"> <script>window.pwned=2</script>'
const OPS = 'ops <b onmouseover="window.pwned=3">on call</b>'
const SUBJECT = '<img src=x onerror="window.pwned=4">'

const tokens = { ops: 'tok-console-ops-0123456789abcdef', reader: 'tok-console-reader-0123456789ab' }

interface Started { gw: RunningGateway; url: string; sim: string; jwt: string; close: () => Promise<void> }

/** npm start's embedded simulator in controller mode, SIMULATOR_FAULTS planting an ambiguous submission; static callers and a JWT caller */
async function startConsoleGateway (env: Env = {}): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'oogw-console-'))
  const key = await testKey('console-1')
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [key.jwk] }))
  const gw = await startGatewayServer(loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    METRICS_PORT: '0',
    GATEWAY_LEDGER_URL: 'sqlite::memory:',
    LOG_LEVEL: 'silent',
    SIMULATOR_PROFILE: 'campaign-control',
    GATEWAY_CONTROL_ENABLED: 'true',
    SIMULATOR_FAULTS: 'drop-after-apply@submit:1',
    SIMULATOR_TASK_SECONDS: '1',
    GATEWAY_CALLERS: JSON.stringify([
      { name: OPS, tokenSha256: sha256Hex(tokens.ops), scopes: ['read', 'control', 'admin'], controllerId: 'ctl-ops' },
      { name: 'reader', tokenSha256: sha256Hex(tokens.reader), scopes: ['read'] }
    ]),
    GATEWAY_JWT_ISSUER: ISSUER,
    GATEWAY_JWT_AUDIENCE: AUDIENCE,
    GATEWAY_JWT_JWKS_FILE: join(dir, 'jwks.json'),
    ...env
  }), { print: () => {} })
  const jwt = await sign(key, { sub: SUBJECT, scope: 'read control', oo_controller_id: 'ctl-jwt', exp: Math.floor(Date.now() / 1000) + 3600 })
  return { gw, url: gw.url, sim: gw.simulator!.url, jwt, close: async () => { await gw.close(); rmSync(dir, { recursive: true, force: true }) } }
}

const post = async (s: Started, token: string, path: string, body: object = {}) => await call(`${s.url}${path}`, { method: 'POST', token, body })

/** a page drawn: its main element no longer busy */
async function drawn (page: Page): Promise<void> {
  await page.locator('main:not([aria-busy])').waitFor()
}

async function goTo (page: Page, hash: string): Promise<void> {
  await page.evaluate((h) => { (globalThis as unknown as PageWindow).location.hash = h }, hash)
  await page.waitForFunction((h) => (globalThis as unknown as PageWindow).location.hash === h, hash)
  await drawn(page)
}

async function signIn (page: Page, token: string): Promise<void> {
  await page.locator('form.sign-in input[name="token"]').fill(token)
  await page.locator('form.sign-in button[type="submit"]').click()
  await drawn(page)
}

/** confirms the open dialog after checking what it restates */
async function confirm (page: Page, restates: RegExp[]): Promise<string> {
  const dialog = page.locator('dialog[open]')
  await dialog.waitFor()
  const text = await dialog.innerText()
  for (const r of restates) expect(text).toMatch(r)
  // this dialog gone (another may open at once: a second confirmation)
  const el = await dialog.elementHandle()
  await dialog.locator('[data-confirm]').click()
  await page.waitForFunction((d) => !(d as unknown as { isConnected: boolean }).isConnected, el)
  return text
}

describe('the console, built', () => {
  beforeAll(async () => { await buildConsole() }, 120_000)

  it('loads under 100 KB gzipped, with nothing inline', () => {
    const sizes = shippedSizes()
    const total = sizes.reduce((n, s) => n + s.gzipped, 0)
    console.log(`console page: ${sizes.map((s) => `${s.file} ${s.bytes} B (${s.gzipped} B gzipped)`).join(', ')}; ${total} B gzipped in all`)
    expect(sizes.map((s) => s.file).some((f) => f.endsWith('.js'))).toBe(true)
    expect(sizes.map((s) => s.file).some((f) => f.endsWith('.css'))).toBe(true)
    expect(total).toBeLessThan(100 * 1024)
    const html = readFileSync(join(ROOT, 'dist/console/index.html'), 'utf8')
    // every script a file, no style element or attribute: what the CSP's 'self' allows
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/)
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i)
  })

  it('names each runbook step by a heading the shipped runbook has', () => {
    const runbook = readFileSync(join(ROOT, 'dist/console/runbooks/ambiguous-write.md'), 'utf8')
    expect(runbook).toBe(readFileSync(join(ROOT, 'docs/runbooks/ambiguous-write.md'), 'utf8'))
    for (const heading of Object.values(STEPS)) expect(runbook).toContain(`\n## ${heading}\n`)
  })

  it('is served with its headers on the console\'s answers only; GATEWAY_CONSOLE=false turns it off', async () => {
    const s = await startConsoleGateway()
    try {
      const page = await call(`${s.url}/console/`)
      expect(page.status).toBe(200)
      expect(page.headers['content-type']).toMatch(/^text\/html/)
      expect(page.headers['content-security-policy']).toBe(CONSOLE_CSP)
      expect(CONSOLE_CSP).toContain("frame-ancestors 'none'")
      expect(CONSOLE_CSP).not.toMatch(/unsafe-inline|unsafe-eval|\*|data:/)
      expect(page.headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer' })
      const bare = await call(`${s.url}/console`)
      expect([bare.status, bare.headers.location]).toEqual([301, '/console/'])
      const runbook = await call(`${s.url}/console/runbooks/ambiguous-write.md`)
      expect([runbook.status, runbook.headers['content-type'], runbook.headers['content-security-policy']]).toEqual([200, 'text/plain; charset=utf-8', CONSOLE_CSP])
      // outside the built folder: refused, still with the console's headers (sent raw: a URL parser would resolve the dots)
      for (const path of ['/console/%2e%2e/package.json', '/console/../package.json', '/console/assets/%2e%2e/%2e%2e/package.json', '/console/..%2f..%2fpackage.json', '/console/nope.js']) {
        const r = await rawExchange(s.url, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
        expect([403, 404], path).toContain(r.status)
        expect(r.text, path).not.toContain('openoperator-gateway')
        expect(r.headers['content-security-policy'], path).toBe(CONSOLE_CSP)
      }
      // the API keeps its own headers
      for (const path of ['/healthz', '/readyz', '/v1/upstream', '/openapi.json']) {
        const r = await call(`${s.url}${path}`, { token: tokens.reader })
        expect(r.status, path).toBe(200)
        expect(r.headers['content-security-policy'], path).toBeUndefined()
      }
    } finally { await s.close() }

    const off = await startConsoleGateway({ GATEWAY_CONSOLE: 'false' })
    try {
      for (const path of ['/console/', '/console']) {
        const r = await call(`${off.url}${path}`)
        expect([r.status, r.body.error.code, r.headers['content-security-policy']], path).toEqual([404, 'not_found', undefined])
      }
    } finally { await off.close() }
  })

  describe.skipIf(!CHROMIUM)('in a browser', { tags: ['slow'], timeout: 60_000 }, () => {
    let s: Started
    let b: Browser
    beforeAll(async () => {
      s = await startConsoleGateway()
      b = await openBrowser(new URL(s.url).origin)
      // the card the remote serves, its name made of markup (discovery reads it again on refresh)
      s.gw.simulator!.setCard((card) => ({ ...card, name: CARD_NAME }))
      expect((await post(s, tokens.ops, '/v1/upstream/refresh')).body.card.name).toBe(CARD_NAME)
    }, 60_000)
    afterAll(async () => {
      await b?.close()
      await s?.close()
    })

    it('signs in with a token and shows the remote', async () => {
      const res = await b.page.goto(`${s.url}/console/`)
      expect(res?.headers()['content-security-policy']).toBe(CONSOLE_CSP)
      await b.page.locator('form.sign-in').waitFor()
      await b.shot('sign-in')
      await signIn(b.page, tokens.ops)
      const main = b.page.locator('main')
      expect(await b.page.locator('[data-card-name]').textContent()).toBe(CARD_NAME)
      const text = await main.innerText()
      for (const seen of ['controller', 'control.claim_control', 'available', 'A2A 0.3', 'absent', 'Circuit breaker', 'closed', 'ledger', 'remote', 'Readiness']) expect(text).toContain(seen)
      expect(await b.page.locator('header .reach').textContent()).toBe('admin: actions shown')
      await b.shot('remote')
    })

    it('finds a rehearsed ambiguous write among the blocked campaigns, reconciles it from the page, and sees it settle', async () => {
      // SIMULATOR_FAULTS=drop-after-apply@submit:1: the remote applies the submission and drops its answer
      expect((await post(s, tokens.ops, '/v1/campaigns/rehearsal/control/claim', { requestId: 'console-claim-1', ttlSeconds: 600 })).status).toBe(200)
      const submitted = await post(s, tokens.ops, '/v1/campaigns/rehearsal/submissions', { requestId: 'console-submit-1', parts: [{ kind: 'text', text: 'run the next stage' }] })
      expect([submitted.status, submitted.body.error.code]).toEqual([504, 'ambiguous_write'])

      await goTo(b.page, '#/blocked')
      const rows = b.page.locator('table[data-blocked] tbody tr')
      expect(await rows.count()).toBe(1)
      const row = await rows.first().innerText()
      for (const seen of ['rehearsal', 'console-submit-1', 'submit', 'ambiguous', 'Runbook Step 3 — reconcile each record']) expect(row).toContain(seen)
      // the age and the deadline (the record's, on the ledger's clock: 45 s after it was written with the default timeouts)
      expect(row).toMatch(/\d+ s\b/)
      expect(row).toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s+in \d+ s/)
      expect(await rows.first().locator('a.step').getAttribute('href')).toBe('runbooks/ambiguous-write.md')
      await b.shot('blocked')

      const before = b.calls.length
      await rows.first().locator('[data-action="reconcile"]').click()
      await b.page.locator('dialog[open]').waitFor()
      await b.shot('confirm-reconcile')
      // nothing is sent before the confirmation
      expect(b.calls.slice(before)).toEqual([])
      await confirm(b.page, [/Ask the remote once, with request_status/, /never sends the mutation again/, /POST \/v1\/campaigns\/rehearsal\/requests\/console-submit-1\/reconcile/])
      await b.page.locator('.notice.good').waitFor()
      expect(await b.page.locator('.notice').first().innerText()).toContain('console-submit-1: applied')
      await b.page.locator('.all-clear').waitFor()
      expect(b.calls.slice(before)).toContain('POST /v1/campaigns/rehearsal/requests/console-submit-1/reconcile')
      // settled in the ledger: no unresolved record, the campaign takes mutations again
      expect((await call(`${s.url}/v1/requests`, { token: tokens.ops })).body.requests).toEqual([])
      expect((await post(s, tokens.ops, '/v1/campaigns/rehearsal/interventions', { requestId: 'console-poke-1', intervention: { note: 'after' } })).status).toBe(200)
      await b.shot('blocked-settled')
    })

    it('shows a campaign: the lease as the remote reports it, its records newest first, the bound task', async () => {
      // the submission's task completes 1 s after it was sent (SIMULATOR_TASK_SECONDS)
      await new Promise((resolve) => setTimeout(resolve, 1200))
      await goTo(b.page, '#/campaign/rehearsal')
      const text = await b.page.locator('main').innerText()
      expect(text).toMatch(/controller\s+ctl-ops/)
      expect(text).toMatch(/epoch\s+1/)
      expect(text).toMatch(/state\s+completed/)
      expect(text).toContain('console-submit-1')
      const requests = await b.page.locator('table[data-records] tbody tr td:first-child').allInnerTexts()
      expect(requests).toEqual(['console-poke-1', 'console-submit-1', 'console-claim-1'])
      // the resolution is shown with who made it: a caller's name, as text
      expect(text).toContain(`reconcile by ${OPS}`)
      await b.shot('campaign')

      // the fence restates what it does and sends nothing when cancelled
      const before = b.calls.length
      await b.page.locator('[data-action="fence"]').click()
      const dialog = b.page.locator('dialog[open]')
      await dialog.waitFor()
      expect(await dialog.innerText()).toMatch(/Claim campaign rehearsal under your own controller id[\s\S]*POST \/v1\/campaigns\/rehearsal\/control\/fence \{"requestId":"fence-\d{8}T\d{6}-[0-9a-f]{6}","ttlSeconds":300\}/)
      await dialog.locator('[data-cancel]').click()
      await dialog.waitFor({ state: 'detached' })
      expect(b.calls.slice(before)).toEqual([])
    })

    it('acknowledges, with a note, a record whose reconcile failed', async () => {
      await call(`${s.sim}/_sim/faults`, { method: 'POST', body: { faults: 'drop-after-apply@submit:1,status=503@request_status:1' } })
      expect((await post(s, tokens.ops, '/v1/campaigns/drill/control/claim', { requestId: 'drill-claim-1', ttlSeconds: 600 })).status).toBe(200)
      expect((await post(s, tokens.ops, '/v1/campaigns/drill/submissions', { requestId: 'drill-submit-1', parts: [{ kind: 'text', text: 'go' }] })).status).toBe(504)

      await goTo(b.page, '#/blocked')
      const row = b.page.locator('table[data-blocked] tbody tr', { hasText: 'drill-submit-1' })
      await row.locator('[data-action="reconcile"]').click()
      await confirm(b.page, [/POST \/v1\/campaigns\/drill\/requests\/drill-submit-1\/reconcile/])
      await b.page.locator('.notice.bad').waitFor()
      expect(await b.page.locator('.notice').first().innerText()).toMatch(/^503 upstream_unavailable[\s\S]*Runbook Step 5/)
      await drawn(b.page)
      expect(await row.innerText()).toContain('Runbook Step 5')

      await row.locator('[data-action="acknowledge"]').click()
      const dialog = b.page.locator('dialog[open]')
      await dialog.waitFor()
      // no note, no confirmation
      expect(await dialog.locator('[data-confirm]').isDisabled()).toBe(true)
      await dialog.locator('textarea[name="note"]').fill('drill: the simulator applied it <b>really</b>')
      await b.shot('confirm-acknowledge')
      await confirm(b.page, [/Resolve the submit drill-submit-1 of campaign drill as assume_applied, in your name, with the note: “drill: the simulator applied it <b>really<\/b>”/,
        /POST \/v1\/campaigns\/drill\/requests\/drill-submit-1\/acknowledge \{"resolution":"assume_applied","note":"drill: the simulator applied it <b>really<\/b>"\}/])
      await b.page.locator('.all-clear').waitFor()
      const record = (await call(`${s.url}/v1/campaigns/drill/requests/drill-submit-1`, { token: tokens.ops })).body
      expect(record).toMatchObject({ state: 'applied', resolution: { kind: 'acknowledge', by: OPS, note: 'drill: the simulator applied it <b>really</b>', resolution: 'assume_applied' } })
    })

    it('lists the controller bindings and frees one past its live lease, confirmed twice', async () => {
      // a JWT caller whose subject is markup binds ctl-jwt with a claim, and holds that lease
      expect((await post(s, s.jwt, '/v1/campaigns/jwt-camp/control/claim', { requestId: 'jwt-claim-1', ttlSeconds: 600 })).status).toBe(200)
      await goTo(b.page, '#/bindings')
      const rows = b.page.locator('table[data-bindings] tbody tr')
      expect(await rows.locator('td:first-child').allInnerTexts()).toEqual(['ctl-jwt', 'ctl-ops'])
      const jwtRow = rows.filter({ hasText: 'ctl-jwt' })
      expect(await jwtRow.locator('td').nth(1).textContent()).toBe(`jwt:${ISSUER}#${SUBJECT}`)
      expect(await jwtRow.locator('td').nth(2).textContent()).toBe(`jwt:${SUBJECT}`)
      await b.shot('bindings')

      await jwtRow.locator('[data-action="free"]').click()
      await confirm(b.page, [/Remove the binding of controller id ctl-jwt/, /DELETE \/v1\/admin\/controllers\/ctl-jwt$/m])
      // 409 controller_lease_held: the second confirmation says so, and forces
      await confirm(b.page, [/The gateway refused: .*jwt-camp/, /Free it anyway/, /DELETE \/v1\/admin\/controllers\/ctl-jwt\?force=true/])
      await b.page.locator('.notice.good').waitFor()
      expect(await b.page.locator('.notice').first().innerText()).toContain('ctl-jwt is free')
      await drawn(b.page)
      expect(await b.page.locator('table[data-bindings] tbody tr td:first-child').allInnerTexts()).toEqual(['ctl-ops'])
    })

    it('shows a reader\'s token every page it may read, and no action', async () => {
      await b.page.locator('header button.sign-out').click()
      await b.page.locator('form.sign-in').waitFor()
      await signIn(b.page, tokens.reader)
      expect(await b.page.locator('header .reach').textContent()).toBe('read only: no actions')
      await goTo(b.page, '#/remote')
      expect(await b.page.locator('[data-card-name]').textContent()).toBe(CARD_NAME)
      for (const hash of ['#/remote', '#/blocked', '#/campaign/rehearsal', '#/campaign/drill', '#/bindings']) {
        await goTo(b.page, hash)
        expect(await b.page.locator('[data-action], [data-confirm]').count(), hash).toBe(0)
      }
      await goTo(b.page, '#/blocked')
      expect(await b.page.locator('main').innerText()).toContain('needs a token with the admin scope')
      await goTo(b.page, '#/campaign/rehearsal')
      // the records a reader may see: who, what and when, not the details
      expect(await b.page.locator('table[data-records] tbody tr td:first-child').allInnerTexts()).toEqual(['console-poke-1', 'console-submit-1', 'console-claim-1'])
      expect(await b.page.locator('main').innerText()).toContain('its task id is shown only to its own caller and admins')
      await b.shot('campaign-reader')
    })

    it('keeps every string of the remote and the callers as text: no element made of it, no script run', async () => {
      const page = b.page
      expect(await page.evaluate(() => (globalThis as unknown as PageWindow).pwned)).toBeUndefined()
      expect(await page.evaluate(() => (globalThis as unknown as PageWindow).cspViolations ?? [])).toEqual([])
      expect(await page.locator('img, script:not([src]), b, [onerror], [onmouseover]').count()).toBe(0)
      await page.reload()
      await drawn(page)
      expect(await page.locator('img, script:not([src]), b, [onerror], [onmouseover]').count()).toBe(0)
      expect(await page.evaluate(() => (globalThis as unknown as PageWindow).pwned)).toBeUndefined()
      expect(b.errors.filter((e) => !/Failed to load resource: the server responded with a status of (403|404|409|503)/.test(e))).toEqual([])
      // nothing asked of any other origin; of the gateway, its own files and the public API alone
      expect(b.elsewhere).toEqual([])
      expect(b.calls.filter((c) => !/^(GET|HEAD) \/console\/|^(GET|POST|DELETE) \/v1\/|^GET \/readyz$/.test(c))).toEqual([])
    })

    it('keeps the token in sessionStorage alone: no cookie, never in an address', async () => {
      const page = b.page
      expect(await page.evaluate(() => Object.keys((globalThis as unknown as PageWindow).sessionStorage))).toEqual(['openoperator-gateway.console.token'])
      expect(await page.evaluate(() => (globalThis as unknown as PageWindow).localStorage.length)).toBe(0)
      expect(await b.context.cookies()).toEqual([])
      expect(b.calls.some((c) => c.includes(tokens.reader) || c.includes(tokens.ops))).toBe(false)
      expect(page.url()).not.toContain(tokens.reader)
      // signing out forgets it
      await page.locator('header button.sign-out').click()
      await page.locator('form.sign-in').waitFor()
      expect(await page.evaluate(() => (globalThis as unknown as PageWindow).sessionStorage.length)).toBe(0)
    })
  })
})
