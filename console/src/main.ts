// The operator's console (docs/operating.md#console): a page the gateway serves at /console/
// that reads and acts through the public REST API alone, with the token the operator pastes. It
// holds no secret of its own and knows nothing the token could not ask for; the API's scopes
// decide what it shows and may do. Pages are named in the address's fragment (#/remote, …), so
// the address never carries the token and a reload stays on the page.
import { ApiError, api, whenUnauthorized, type Upstream } from './api.js'
import type { Outcome } from './actions.js'
import { fill, h } from './dom.js'
import type { PageContext } from './page.js'
import { bindingsPage } from './pages/bindings.js'
import { blockedPage } from './pages/blocked.js'
import { CAMPAIGN_ID, campaignPage } from './pages/campaign.js'
import { remotePage } from './pages/remote.js'
import { session } from './session.js'

const app = document.getElementById('app') as HTMLElement

const PAGES = [
  ['#/remote', 'The remote'],
  ['#/blocked', 'Blocked campaigns'],
  ['#/campaign', 'A campaign'],
  ['#/bindings', 'Controller bindings']
] as const

/** what the signed-in token may do, learnt from the API's answers once per sign-in or reload */
let reach: { admin: boolean } | undefined
/** the render in progress; an older one that finishes late draws nothing */
let drawing = 0

whenUnauthorized(() => { signOut('The gateway refused the token (401 unauthorized): it is unknown, expired or invalid. Sign in again.') })
window.addEventListener('hashchange', () => { void draw() })
void draw()

function signOut (why?: string): void {
  session.signOut()
  reach = undefined
  signInPage(why)
}

function signInPage (why?: string): void {
  drawing++
  const token = h('input', { type: 'password', name: 'token', autocomplete: 'off', spellcheck: 'false', required: true, 'aria-label': 'bearer token' })
  const problem = h('p', { class: 'problem', role: 'alert' }, why ?? '')
  const form = h('form', { class: 'sign-in' },
    h('h1', {}, 'openoperator-gateway · console'),
    h('p', {}, 'Paste a caller\'s bearer token. What it may read and do is what the API allows it: its scopes decide what you see here.'),
    h('label', { class: 'block' }, 'Token', token),
    h('button', { type: 'submit' }, 'Sign in'),
    problem,
    h('p', { class: 'small' }, 'The token stays in this browser tab (sessionStorage) until you sign out or close the tab. It is sent only to this gateway, in the Authorization header of the console\'s own calls — never in a cookie or an address.'))
  form.addEventListener('submit', (e) => {
    e.preventDefault()
    const t = token.value.trim()
    if (t === '') return
    session.signIn(t)
    token.value = ''
    void draw()
  })
  fill(app, form)
  token.focus()
}

/** what the token may do: read is needed for every page; admin shows the actions */
async function learnReach (): Promise<{ admin: boolean }> {
  await api<Upstream>('GET', '/v1/upstream')
  // an admin's read of the ledger alone (no call to the remote): 200 for an admin, 403 otherwise
  const admin = await api<unknown>('GET', '/v1/admin/controllers').then(() => true, (err: unknown) => {
    if (err instanceof ApiError && err.code === 'forbidden') return false
    throw err
  })
  return { admin }
}

async function draw (): Promise<void> {
  if (session.token() === null) { signInPage(); return }
  const mine = ++drawing
  if (reach === undefined) {
    try {
      reach = await learnReach()
    } catch (err) {
      if (mine !== drawing) return
      const why = err instanceof ApiError
        ? err.code === 'forbidden' ? 'This token lacks the read scope every page of the console needs.' : `${err.status === 0 ? 'no answer' : `${err.status} ${err.code}`}: ${err.message}`
        : 'The console could not reach the gateway.'
      signOut(why)
      return
    }
  }
  if (mine !== drawing) return
  const route = location.hash === '' ? '#/remote' : location.hash
  const [, page = 'remote', arg] = /^#\/([a-z]+)(?:\/(.*))?$/.exec(route) ?? []
  const main = h('main', { 'aria-busy': 'true' }, h('p', { class: 'loading' }, 'Loading…'))
  const notices = h('div', { class: 'notices', 'aria-live': 'polite' })
  fill(app, shell(`#/${page}`, reach.admin), notices, main)
  const ctx: PageContext = {
    admin: reach.admin,
    main,
    tell: (o: Outcome) => { notices.prepend(h('div', { class: `notice ${o.tone}`, role: 'status' }, ...o.lines.map((l) => h('p', {}, l)))) },
    reload: () => {
      main.setAttribute('aria-busy', 'true')
      void render(ctx, page, arg).catch(() => {})
    }
  }
  await render(ctx, page, arg)
}

async function render (ctx: PageContext, page: string, arg: string | undefined): Promise<void> {
  const mine = drawing
  const target = h('main')
  const sub: PageContext = { ...ctx, main: target }
  if (page === 'blocked') await blockedPage(sub)
  else if (page === 'bindings') await bindingsPage(sub)
  else if (page === 'campaign') {
    const id = arg === undefined ? undefined : safeDecode(arg)
    await campaignPage(sub, id !== undefined && CAMPAIGN_ID.test(id) ? id : undefined)
  } else await remotePage(sub)
  // a later navigation owns the page now
  if (mine !== drawing) return
  ctx.main.replaceChildren(...target.childNodes)
  ctx.main.removeAttribute('aria-busy')
}

function safeDecode (s: string): string | undefined {
  try { return decodeURIComponent(s) } catch { return undefined }
}

function shell (current: string, admin: boolean): HTMLElement {
  const out = h('button', { type: 'button', class: 'sign-out' }, 'Sign out')
  out.addEventListener('click', () => { signOut() })
  return h('header', {},
    h('span', { class: 'brand' }, 'openoperator-gateway'),
    h('nav', {}, ...PAGES.map(([href, label]) => h('a', { href, 'aria-current': href === current ? 'page' : undefined }, label))),
    h('span', { class: 'reach' }, admin ? 'admin: actions shown' : 'read only: no actions'),
    out)
}
