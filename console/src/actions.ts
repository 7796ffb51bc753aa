// The four admin actions (docs/operating.md#console), each the call the runbook names
// (docs/runbooks/ambiguous-write.md), each behind a confirmation that restates it: reconcile
// (step 3), acknowledge (step 5), fence (step 6), and freeing a controller binding
// (docs/operating.md#controller-bindings). What comes back is told in the runbook's words: the
// step that follows from an answer, never a guess at what the remote did.
import { ApiError, api, seg, type RequestRecord } from './api.js'
import { confirmAction } from './confirm.js'
import { h, type Child } from './dom.js'
import { RUNBOOK, STEPS, type Step } from './runbook.js'

export interface Outcome {
  tone: 'good' | 'warn' | 'bad'
  lines: Child[]
  /** a refusal's error code and message, for a caller that offers the next step */
  refused?: { code: string, message: string }
}

/** a link to a runbook step, by its heading (the runbook is plain text: the heading is what to look for) */
export function stepLink (step: Step): HTMLAnchorElement {
  return h('a', { href: RUNBOOK, target: '_blank', rel: 'noopener noreferrer', class: 'step' }, `Runbook ${STEPS[step].replace(/`/g, '')}`)
}

const recordPath = (r: { campaignId: string, requestId: string }): string =>
  `/v1/campaigns/${seg(r.campaignId)}/requests/${seg(r.requestId)}`

function failed (err: unknown, scope: string, more: (e: ApiError) => Child[] = () => []): Outcome {
  if (!(err instanceof ApiError)) throw err
  const head = `${err.status === 0 ? 'no answer' : `${err.status} ${err.code}`}: ${err.message}`
  const refused = { code: err.code, message: err.message }
  if (err.code === 'forbidden') return { tone: 'bad', lines: [head, `This token lacks the ${scope} scope this call needs.`], refused }
  return { tone: err.status >= 500 || err.status === 0 ? 'bad' : 'warn', lines: [head, ...more(err)], refused }
}

/** POST …/requests/:requestId/reconcile — asks the remote once; never sends the mutation again */
export async function reconcile (r: RequestRecord & { campaignId: string }): Promise<Outcome | undefined> {
  const path = `${recordPath(r)}/reconcile`
  const yes = await confirmAction({
    title: `Reconcile ${r.requestId}`,
    confirmLabel: 'Reconcile',
    restate: () => ({
      what: [
        `Ask the remote once, with request_status and the original request id, whether it applied the ${r.operation} ${r.requestId} of campaign ${r.campaignId}.`,
        'It never sends the mutation again and never claims or renews a lease; reconciling again is safe. It needs the control scope.'
      ],
      call: `POST ${path}`
    })
  })
  if (!yes) return undefined
  try {
    const settled = await api<RequestRecord>('POST', path, {})
    const task = settled.taskId === null || settled.taskId === undefined ? [] : [`Its task: ${settled.taskId}.`]
    if (settled.state === 'applied') return { tone: 'good', lines: [`${r.requestId}: applied — the remote applied it. Do not send it again.`, ...task, 'The campaign accepts mutations again.'] }
    if (settled.state === 'not_applied') return { tone: 'good', lines: [`${r.requestId}: not applied — the remote never applied it, and no longer can.`, 'The campaign accepts mutations again; if the change is still wanted, send it as a new request with a new request id.'] }
    return { tone: 'good', lines: [`${r.requestId}: ${settled.state} — already resolved, nothing asked.`] }
  } catch (err) {
    return failed(err, 'control', (e) => {
      if (e.code === 'reconcile_too_early') return [`The remote says not applied, but a late copy could still be applied for ${e.retryAfter ?? '?'} s more: nothing was recorded.`, h('span', {}, stepLink(4), `: wait ${e.retryAfter ?? 'Retry-After'} s, then reconcile again.`)]
      if (e.code === 'capability_unavailable') return [h('span', {}, 'The remote does not advertise request_status: ', stepLink(5), '.')]
      if (e.code === 'request_in_flight') return ['The record is still pending: wait for its deadline, then reconcile.']
      if (e.status >= 500) return [h('span', {}, 'The record counts one more failed reconcile. Try again in a minute; if it keeps failing, ', stepLink(5), '.')]
      return []
    })
  }
}

/** POST …/requests/:requestId/acknowledge — an admin's resolution with a note; nothing sent but, for assume_not_applied, a read_control */
export async function acknowledge (r: RequestRecord & { campaignId: string }): Promise<Outcome | undefined> {
  const path = `${recordPath(r)}/acknowledge`
  const applied = h('input', { type: 'radio', name: 'resolution', value: 'assume_applied', checked: true })
  const notApplied = h('input', { type: 'radio', name: 'resolution', value: 'assume_not_applied' })
  const note = h('textarea', { name: 'note', rows: '3', maxlength: '2000', placeholder: 'what the decision rests on, e.g. "remote log shows it applied at 10:42"' })
  const resolution = (): string => notApplied.checked ? 'assume_not_applied' : 'assume_applied'
  const body = (): { resolution: string, note: string } => ({ resolution: resolution(), note: note.value })
  const yes = await confirmAction({
    title: `Acknowledge ${r.requestId}`,
    confirmLabel: 'Acknowledge',
    fields: [
      h('fieldset', {}, h('legend', {}, 'Resolution'),
        h('label', {}, applied, ' assume_applied — you saw it take effect on the remote\'s side'),
        h('label', {}, notApplied, ' assume_not_applied — the remote provably can no longer apply it (its lease shows a higher epoch)')),
      h('label', { class: 'block' }, 'Note (kept in the ledger with your name and the time)', note)
    ],
    restate: () => ({
      what: [
        `Resolve the ${r.operation} ${r.requestId} of campaign ${r.campaignId} as ${resolution()}, in your name, with the note: “${note.value}”.`,
        resolution() === 'assume_applied'
          ? 'Nothing is sent to the remote. For a submission whose task id the gateway never learned, the campaign is left without a bound task.'
          : 'Nothing is sent to the remote but one read_control: the gateway refuses unless the remote shows an epoch above the record\'s (a claim or a cancel also waits for its deadline).',
        'The campaign then accepts mutations again. Not sure? Cancel: a blocked campaign is safe.'
      ],
      call: `POST ${path} ${JSON.stringify(body())}`
    }),
    check: () => note.value.trim() === '' ? 'A note is required: what the decision rests on.' : null
  })
  if (!yes) return undefined
  try {
    const settled = await api<RequestRecord>('POST', path, body())
    return { tone: 'good', lines: [`${r.requestId}: ${settled.state}, acknowledged as ${resolution()}.`, 'The campaign accepts mutations again.'] }
  } catch (err) {
    return failed(err, 'admin', (e) => {
      if (e.code === 'acknowledge_unsafe') return [h('span', {}, 'Not allowed yet: reconcile first (', stepLink(3), '), or for assume_not_applied without a higher epoch, ', stepLink(6), '.')]
      if (e.code === 'reconcile_too_early') return [`Wait ${e.retryAfter ?? 'Retry-After'} s (the record's deadline), then acknowledge again.`]
      return []
    })
  }
}

/** a fresh request id for a fence, in the runbook's form: fence-<date>-<random> */
function fenceId (): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')
  const rand = Array.from(crypto.getRandomValues(new Uint8Array(3)), (b) => b.toString(16).padStart(2, '0')).join('')
  return `fence-${stamp}-${rand}`
}

/** POST …/control/fence — an admin claims a blocked campaign under its own controller id */
export async function fence (campaignId: string): Promise<Outcome | undefined> {
  const path = `/v1/campaigns/${seg(campaignId)}/control/fence`
  const ttl = h('input', { type: 'number', name: 'ttlSeconds', min: '15', max: '3600', value: '300' })
  const rid = h('input', { type: 'text', name: 'requestId', value: fenceId(), size: '40', pattern: '[A-Za-z0-9._:-]{8,128}' })
  const body = (): { requestId: string, ttlSeconds: number } => ({ requestId: rid.value, ttlSeconds: Number(ttl.value) })
  const yes = await confirmAction({
    title: `Fence ${campaignId}`,
    confirmLabel: 'Fence',
    fields: [
      h('label', { class: 'block' }, 'Lease time to live, seconds (15–3600)', ttl),
      h('label', { class: 'block' }, 'Request id (keep it: sending it again is the same fence)', rid)
    ],
    restate: () => ({
      what: [
        `Claim campaign ${campaignId} under your own controller id (this token's), for ${ttl.value} s, at an epoch above every record's: none of its unresolved records can apply any more.`,
        'It is sent once and recorded in the ledger like any claim. The remote grants it only once the current lease has lapsed (409 lease_held_by_other before).',
        'Then acknowledge the records assume_not_applied, oldest first, and release the lease with the same token so the controller can claim again.'
      ],
      call: `POST ${path} ${JSON.stringify(body())}`
    }),
    check: () => {
      if (!/^[A-Za-z0-9._:-]{8,128}$/.test(rid.value)) return 'The request id is 8–128 characters of A–Z, a–z, 0–9, . _ : -'
      const t = Number(ttl.value)
      return Number.isInteger(t) && t >= 15 && t <= 3600 ? null : 'The time to live is a whole number of seconds from 15 to 3600.'
    }
  })
  if (!yes) return undefined
  try {
    const fenced = await api<{ lease: { controllerId: string, epoch: number, expiresAt: number } }>('POST', path, body())
    return { tone: 'good', lines: [`Fenced: the lease is ${fenced.lease.controllerId}'s at epoch ${fenced.lease.epoch}, until ${new Date(fenced.lease.expiresAt * 1000).toISOString()}.`, h('span', {}, 'Now acknowledge the records assume_not_applied, oldest first (', stepLink(5), '), then release the lease.')] }
  } catch (err) {
    return failed(err, 'admin', (e) => {
      if (e.code === 'forbidden') return ['The fence needs the admin scope and a controllerId of the token\'s own.']
      if (e.code === 'lease_held_by_other') return ['The controller\'s lease is still live: wait for its expiresAt (the lease above), then fence.']
      return []
    })
  }
}

export interface Binding { controllerId: string, identity: string, caller: string }

/** DELETE /v1/admin/controllers/:controllerId — frees a controller id; `force` past a live lease */
export async function freeBinding (b: Binding, force?: { refusal: string }): Promise<Outcome | undefined> {
  const path = `/v1/admin/controllers/${seg(b.controllerId)}${force === undefined ? '' : '?force=true'}`
  const yes = await confirmAction({
    title: `${force === undefined ? 'Free' : 'Force-free'} controller id ${b.controllerId}`,
    confirmLabel: force === undefined ? 'Free' : 'Free anyway',
    restate: () => ({
      what: [
        `Remove the binding of controller id ${b.controllerId} to ${b.identity} (caller ${b.caller}). The next identity to mutate under ${b.controllerId} binds it.`,
        ...(force === undefined
          ? ['A lease the remote holds under the id is untouched; while it is live the gateway keeps the binding (409 controller_lease_held).']
          : [`The gateway refused: ${force.refusal}`, `Free it anyway: its holder may still be mutating under that lease, and whoever binds ${b.controllerId} next would act under it too.`]),
        'The removal is logged with your name and identity.'
      ],
      call: `DELETE ${path}`
    })
  })
  if (!yes) return undefined
  try {
    await api<unknown>('DELETE', path)
    return { tone: 'good', lines: [`${b.controllerId} is free: the next identity to mutate under it binds it.`] }
  } catch (err) {
    return failed(err, 'admin', (e) => e.code === 'controller_lease_held' ? ['Release the lease or let it expire — or free it anyway (force), knowing its holder may still be acting under it.'] : [])
  }
}
