// Debian's Chromium driven by playwright-core, as the console's tests need it: never a browser
// downloaded (none can be: the machine's network is closed), headless, a fresh profile per run,
// everything that would reach outside switched off — and, to prove the page asks nothing of
// anywhere else, every request to another origin than the gateway's refused and recorded.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { ROOT } from './build.js'

export const CHROMIUM = '/usr/bin/chromium'
export const CHROMIUM_SKIP = `${CHROMIUM} is absent (Debian: apt-get install chromium; .ci/run installs it)`
export const chromiumAvailable = (): boolean => existsSync(CHROMIUM)

/** where the screenshots go: the test report's folder, git-ignored; docs/img/ holds the copies the documents show */
export const SHOTS = join(ROOT, 'test-results', 'console')

export const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

/**
 * what the tests read in the page, typed here: the root tsconfig has no DOM library (the
 * gateway's code runs in Node), so a callback run in the page names the window through this
 */
export interface PageWindow {
  location: { hash: string }
  sessionStorage: { length: number }
  localStorage: { length: number }
  document: { addEventListener: (type: 'securitypolicyviolation', f: (e: { violatedDirective: string; blockedURI: string }) => void) => void }
  /** set by any markup of the test's that ever runs */
  pwned?: number
  /** the page's Content-Security-Policy violations, recorded by the init script below */
  cspViolations?: string[]
}

export interface Browser {
  context: BrowserContext
  page: Page
  /** requests to any origin but the gateway's, refused */
  elsewhere: string[]
  /** the page's own errors and console errors */
  errors: string[]
  /** every request the page made to the gateway, as `METHOD path` */
  calls: string[]
  shot: (name: string) => Promise<void>
  close: () => Promise<void>
}

export async function openBrowser (origin: string): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'oogw-console-chromium-'))
  mkdirSync(SHOTS, { recursive: true })
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 800 },
    locale: 'en-GB',
    timezoneId: 'UTC'
  })
  const elsewhere: string[] = []
  const errors: string[] = []
  const calls: string[] = []
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url())
    if (url.origin !== origin) { elsewhere.push(url.href); await route.abort('blockedbyclient'); return }
    calls.push(`${route.request().method()} ${url.pathname}${url.search}`)
    await route.continue()
  })
  // a CSP violation is an event in the page: recorded where the test can read it
  await context.addInitScript(() => {
    const w = globalThis as unknown as PageWindow
    w.document.addEventListener('securitypolicyviolation', (e) => {
      (w.cspViolations ??= []).push(`${e.violatedDirective} ${e.blockedURI}`)
    })
  })
  const page = context.pages()[0] ?? await context.newPage()
  // a page that does not show what is waited for fails in seconds, not in half a minute
  page.setDefaultTimeout(10_000)
  page.on('pageerror', (err) => { errors.push(`pageerror: ${err.message}`) })
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`) })
  return {
    context,
    page,
    elsewhere,
    errors,
    calls,
    shot: async (name) => { await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true }) },
    close: async () => {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    }
  }
}
