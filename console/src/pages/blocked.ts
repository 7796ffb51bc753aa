// Blocked campaigns (docs/runbooks/ambiguous-write.md, step 2): the unresolved records of every
// campaign, oldest first — GET /v1/requests, an admin's — each with its operation, age, deadline,
// failed reconciles and the runbook step that applies, and, for an admin, the step's action.
import { acknowledge, reconcile, stepLink } from '../actions.js'
import { api, type RequestRecord, type UnresolvedList, type Upstream } from '../api.js'
import { append, badge, duration, fill, h, table, whenCell, type Child } from '../dom.js'
import { actionButton, problem, section, type PageContext } from '../page.js'
import { adviceFor } from '../runbook.js'

const PAGE = 100

export async function blockedPage (ctx: PageContext): Promise<void> {
  const title = h('h1', {}, 'Blocked campaigns')
  if (!ctx.admin) {
    fill(ctx.main, title, h('p', { class: 'problem' }, 'This page lists every campaign\'s unresolved records (GET /v1/requests): it needs a token with the admin scope.'))
    return
  }
  // whether the remote advertises request_status decides between reconcile and acknowledge
  const [first, up] = await Promise.allSettled([
    api<UnresolvedList>('GET', `/v1/requests?limit=${PAGE}`),
    api<Upstream>('GET', '/v1/upstream')
  ])
  const advertised = up.status === 'fulfilled' ? up.value.capabilities['control.request_status'] : undefined
  const requestStatus = up.status === 'fulfilled' ? advertised !== undefined && advertised.state !== 'unavailable' : undefined
  if (first.status === 'rejected') { fill(ctx.main, title, problem(first.reason)); return }

  const records: RequestRecord[] = [...first.value.requests]
  const body = h('div')
  const more = h('button', { type: 'button' }, 'Load the next page')
  let cursor = first.value.nextCursor
  const draw = (): void => {
    const campaigns = new Set(records.map((r) => r.campaignId))
    fill(body,
      records.length === 0
        ? h('p', { class: 'all-clear' }, 'No unresolved record: no campaign is blocked.')
        : h('p', {}, `${records.length} unresolved record${records.length === 1 ? '' : 's'} in ${campaigns.size} campaign${campaigns.size === 1 ? '' : 's'}, oldest first. Resolve a campaign's records oldest first: its mutations were sent in that order.`),
      records.length === 0 ? null : table(['campaign', 'request', 'operation', 'state', 'age', 'deadline', 'failed reconciles', 'runbook', ''], records.map((r) => row(ctx, r, requestStatus)), { class: 'wide', 'data-blocked': '' }),
      cursor === null ? null : more)
  }
  more.addEventListener('click', () => {
    if (cursor === null) return
    more.disabled = true
    api<UnresolvedList>('GET', `/v1/requests?limit=${PAGE}&cursor=${encodeURIComponent(cursor)}`).then((page) => {
      records.push(...page.requests)
      cursor = page.nextCursor
      more.disabled = false
      draw()
    }, (err: unknown) => { more.disabled = false; append(body, problem(err)) })
  })
  draw()
  fill(ctx.main, title, section('Unresolved records', body))
}

function row (ctx: PageContext, r: RequestRecord, requestStatus: boolean | undefined): Child[] {
  const now = Date.now()
  const campaignId = r.campaignId ?? ''
  const advice = adviceFor(r, requestStatus)
  const withCampaign = { ...r, campaignId }
  const actions = r.state !== 'ambiguous'
    ? null
    : h('span', { class: 'actions' },
      actionButton(ctx, 'Reconcile', 'reconcile', async () => await reconcile(withCampaign)),
      actionButton(ctx, 'Acknowledge', 'acknowledge', async () => await acknowledge(withCampaign)))
  return [
    h('a', { href: `#/campaign/${encodeURIComponent(campaignId)}` }, campaignId),
    h('code', {}, r.requestId),
    r.operation,
    badge(r.state, r.state === 'ambiguous' ? 'bad' : 'warn'),
    duration(now - Date.parse(r.createdAt)),
    whenCell(r.deadline, now),
    String(r.reconcileFailures ?? 0),
    h('span', {}, stepLink(advice.step), h('br'), h('small', {}, advice.what)),
    actions
  ]
}
