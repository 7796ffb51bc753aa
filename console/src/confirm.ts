// The confirmation every action goes through (docs/operating.md#console): a modal dialog that
// restates what the action does and the API call it makes — the same call the runbook names —
// before anything is sent. `restate` is run again whenever a field of the dialog changes, so what
// is restated is what will be sent; `check` keeps Confirm disabled while a field is not yet valid.
import { append, fill, h, type Child } from './dom.js'

export interface Confirmation {
  title: string
  /** the form fields the action takes, if any */
  fields?: Child[]
  /** what the action will do, in words, and the call: read when the dialog opens and on each change */
  restate: () => { what: Child[], call: string }
  /** why Confirm is not yet possible, or null */
  check?: () => string | null
  confirmLabel: string
}

/** resolves true when the operator confirms, false when they cancel or close the dialog */
export async function confirmAction (c: Confirmation): Promise<boolean> {
  const what = h('div', { class: 'restate' })
  const call = h('code', { class: 'call' })
  const problem = h('p', { class: 'problem', role: 'status' })
  const ok = h('button', { type: 'button', class: 'danger', 'data-confirm': '' }, c.confirmLabel)
  const cancel = h('button', { type: 'button', 'data-cancel': '' }, 'Cancel')
  const dialog = h('dialog', { 'aria-labelledby': 'confirm-title' },
    h('h2', { id: 'confirm-title' }, c.title),
    ...(c.fields === undefined ? [] : [h('div', { class: 'fields' }, ...c.fields)]),
    h('h3', {}, 'This will'), what,
    h('p', { class: 'call-line' }, 'API call: ', call),
    problem,
    h('div', { class: 'buttons' }, cancel, ok))
  const update = (): void => {
    const r = c.restate()
    fill(what, ...r.what.map((w) => h('p', {}, w)))
    call.textContent = r.call
    const why = c.check?.() ?? null
    ok.disabled = why !== null
    problem.textContent = why ?? ''
  }
  dialog.addEventListener('input', update)
  dialog.addEventListener('change', update)
  update()
  append(document.body, dialog)
  dialog.showModal()
  return await new Promise<boolean>((resolve) => {
    let answer = false
    ok.addEventListener('click', () => { answer = true; dialog.close() })
    cancel.addEventListener('click', () => { dialog.close() })
    dialog.addEventListener('close', () => { dialog.remove(); resolve(answer) })
  })
}
