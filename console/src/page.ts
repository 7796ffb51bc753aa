// What every page shares: its context (the token's reach, where to write, how to tell an
// outcome), a titled section, and an API error shown in the API's own words.
import { ApiError } from './api.js'
import type { Outcome } from './actions.js'
import { h, type Child } from './dom.js'

export interface PageContext {
  /** whether the token holds the admin scope (the console's actions are shown only then) */
  admin: boolean
  /** the page's own element */
  main: HTMLElement
  /** shows what an action came to, above the page */
  tell: (o: Outcome) => void
  /** draws the current page again, with fresh answers */
  reload: () => void
}

export function section (title: string, ...children: Child[]): HTMLElement {
  return h('section', {}, h('h2', {}, title), ...children)
}

/** an answer that was not a success: its status, code and message, as the API gave them */
export function problem (err: unknown): HTMLElement {
  if (!(err instanceof ApiError)) return h('p', { class: 'problem' }, 'Something went wrong in the console itself.')
  const hint = err.code === 'forbidden' ? ' This token lacks the scope this part needs.' : ''
  return h('p', { class: 'problem' }, `${err.status === 0 ? 'no answer' : `${err.status} ${err.code}`}: ${err.message}${hint}`)
}

/** a button that runs an action and tells its outcome; `data-action` names it (tests count them) */
export function actionButton (ctx: PageContext, label: string, name: string, run: () => Promise<Outcome | undefined>): HTMLButtonElement {
  const b = h('button', { type: 'button', 'data-action': name }, label)
  b.addEventListener('click', () => {
    b.disabled = true
    run().then((o) => {
      b.disabled = false
      if (o !== undefined) { ctx.tell(o); ctx.reload() }
    }, (err: unknown) => {
      b.disabled = false
      ctx.tell({ tone: 'bad', lines: [String(err)] })
    })
  })
  return b
}
