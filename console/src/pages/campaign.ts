// A campaign: its lease as the remote reports it now (GET …/control, a fresh read_control), its
// records newest first (GET …/requests), and its bound task — the task of its newest applied
// submission (docs/api.md#cancel), read with GET /v1/tasks/:taskId. For an admin: reconcile and
// acknowledge on an ambiguous record, and the fence.
import { acknowledge, fence, reconcile } from '../actions.js'
import { api, seg, type ControlView, type RequestList, type RequestRecord, type Task } from '../api.js'
import { badge, facts, fill, h, table, when, whenCell, type Child } from '../dom.js'
import { actionButton, problem, section, type PageContext } from '../page.js'

export const CAMPAIGN_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** the form that opens a campaign by id (the page's address names the campaign, never a token) */
export function openForm (current = ''): HTMLFormElement {
  const input = h('input', { type: 'text', name: 'campaignId', value: current, placeholder: 'campaign id', pattern: CAMPAIGN_ID.source.slice(1, -1), required: true, 'aria-label': 'campaign id' })
  const form = h('form', { class: 'open' }, input, h('button', { type: 'submit' }, 'Open'))
  form.addEventListener('submit', (e) => {
    e.preventDefault()
    if (CAMPAIGN_ID.test(input.value)) location.hash = `#/campaign/${encodeURIComponent(input.value)}`
  })
  return form
}

export async function campaignPage (ctx: PageContext, campaignId: string | undefined): Promise<void> {
  if (campaignId === undefined) {
    fill(ctx.main, h('h1', {}, 'A campaign'), h('p', {}, 'Open a campaign by its id, or from the blocked campaigns.'), openForm())
    return
  }
  const c = `/v1/campaigns/${seg(campaignId)}`
  const [control, records, applied] = await Promise.allSettled([
    api<ControlView>('GET', `${c}/control`),
    api<RequestList>('GET', `${c}/requests?limit=100`),
    // the bound task is the newest applied submission's, wherever it sits among the records
    api<RequestList>('GET', `${c}/requests?state=applied&limit=1000`)
  ])
  const bound = applied.status === 'fulfilled' ? applied.value.requests.find((r) => r.operation === 'submit') : undefined
  const task = bound?.taskId === undefined || bound.taskId === null ? undefined : await api<Task>('GET', `/v1/tasks/${seg(bound.taskId)}`).then((t) => t, (err: unknown) => err)

  fill(ctx.main,
    h('h1', {}, 'Campaign ', h('code', {}, campaignId)),
    openForm(campaignId),
    h('div', { class: 'grid' },
      section('Lease, as the remote reports it', control.status === 'fulfilled' ? lease(control.value) : problem(control.reason),
        ctx.admin ? h('p', {}, actionButton(ctx, 'Fence this campaign…', 'fence', async () => await fence(campaignId))) : null),
      section('Bound task', boundTask(applied, bound, task))),
    section('Records, newest first', records.status === 'fulfilled' ? recordTable(ctx, campaignId, records.value.requests) : problem(records.reason)))
}

function lease (v: ControlView): HTMLElement {
  if (v.lease === null) return h('p', {}, 'No lease: no controller holds the campaign.')
  const expires = new Date(v.lease.expiresAt * 1000).toISOString()
  return facts([
    ['controller', h('code', {}, v.lease.controllerId)],
    ['epoch', String(v.lease.epoch)],
    ['expires', `${when(expires)}${v.lease.expiresAt * 1000 <= Date.now() ? ' — lapsed' : ''}`]
  ])
}

function boundTask (applied: PromiseSettledResult<RequestList>, bound: RequestRecord | undefined, task: Task | unknown): Child {
  if (applied.status === 'rejected') return problem(applied.reason)
  if (bound === undefined) return h('p', {}, 'None: no applied submission among the campaign\'s newest 1,000 applied records.')
  if (bound.taskId === undefined) return h('p', {}, `The newest applied submission is ${bound.requestId}; its task id is shown only to its own caller and admins.`)
  if (bound.taskId === null) return h('p', {}, `The newest applied submission, ${bound.requestId}, has no known task id (acknowledged as applied): no bound task until a later submission binds one.`)
  if (task === undefined || !isTask(task)) return h('div', {}, h('p', {}, 'Task ', h('code', {}, bound.taskId), ` of ${bound.requestId}:`), problem(task))
  const texts = task.artifacts.flatMap((a) => a.parts.map((p): Child => p.kind === 'text'
    ? h('li', {}, a.name === null ? '' : `${a.name}: `, p.text)
    : p.kind === 'data'
      ? h('li', {}, a.name === null ? '' : `${a.name}: `, h('code', {}, JSON.stringify(p.data)))
      : h('li', {}, `file ${p.file.name ?? ''} ${p.file.mimeType ?? ''} `, h('code', {}, p.file.uri ?? ''), ' (never fetched)')))
  const s = task.supervisor
  return h('div', {},
    facts([
      ['task', h('code', {}, task.taskId)],
      ['submitted by', `${bound.requestId} (${bound.caller})`],
      ['state', badge(task.state, task.state === 'completed' ? 'good' : task.state === 'failed' || task.state === 'rejected' ? 'bad' : 'plain')],
      ['stage', s?.stage ?? null],
      ['run', s?.runId ?? null],
      ['attempt', s?.attemptId ?? null]
    ]),
    texts.length === 0 ? null : h('div', {}, h('h3', {}, `Artifacts${task.artifactsTruncated ? ' (truncated)' : ''}`), h('ul', { class: 'artifacts' }, ...texts)),
    h('p', {}, h('small', {}, 'completed is the outcome of an attempt, never proof that the mission was accepted.')))
}

const isTask = (t: unknown): t is Task => typeof t === 'object' && t !== null && 'taskId' in t && 'artifacts' in t

const STATE_TONE: Record<string, 'good' | 'warn' | 'bad' | 'plain'> = { applied: 'good', not_applied: 'plain', rejected: 'plain', pending: 'warn', ambiguous: 'bad' }

function recordTable (ctx: PageContext, campaignId: string, records: RequestRecord[]): Child {
  if (records.length === 0) return h('p', {}, 'No records: the gateway has sent no mutation of this campaign.')
  const rows = records.map((r): Child[] => {
    const withCampaign = { ...r, campaignId }
    const resolution = r.resolution === null || r.resolution === undefined
      ? null
      : h('span', { class: 'free' }, `${r.resolution.kind} by ${r.resolution.by}, ${when(r.resolution.at)}${r.resolution.resolution === null ? '' : ` — ${r.resolution.resolution}`}`, r.resolution.note === null ? null : h('br'), r.resolution.note === null ? null : h('q', {}, r.resolution.note))
    return [
      h('code', {}, r.requestId),
      r.operation,
      badge(r.state, STATE_TONE[r.state] ?? 'plain'),
      h('span', { class: 'free' }, r.caller),
      whenCell(r.createdAt),
      r.controllerEpoch === undefined || r.controllerEpoch === null ? '—' : String(r.controllerEpoch),
      r.taskId === undefined || r.taskId === null ? '—' : h('code', { class: 'wrap' }, r.taskId),
      r.outcomeCode ?? '—',
      resolution,
      ctx.admin && r.state === 'ambiguous'
        ? h('span', { class: 'actions' },
          actionButton(ctx, 'Reconcile', 'reconcile', async () => await reconcile(withCampaign)),
          actionButton(ctx, 'Acknowledge', 'acknowledge', async () => await acknowledge(withCampaign)))
        : null
    ]
  })
  return table(['request', 'operation', 'state', 'caller', 'created', 'epoch', 'task', 'outcome', 'resolution', ''], rows, { class: 'wide', 'data-records': '' })
}
