// The remote (docs/api.md#get-upstream, docs/api.md#readyz): the card the gateway holds, the mode
// and why, every capability with its state, the protocol version, the card's signature, the
// circuit breaker, the clock offsets per peer and the readiness checks. Two calls: GET
// /v1/upstream (read scope) and GET /readyz (no token).
import { api, publicGet, type Ready, type Upstream } from '../api.js'
import { badge, facts, fill, h, table, when, type Child } from '../dom.js'
import { problem, section, type PageContext } from '../page.js'

const tone = (state: string): 'good' | 'warn' | 'bad' | 'plain' =>
  ({ available: 'good', verified: 'good', closed: 'good', controller: 'good', tentative: 'warn', present: 'warn', half_open: 'warn', observer: 'warn', unavailable: 'bad', failed: 'bad', open: 'bad' } as Record<string, 'good' | 'warn' | 'bad'>)[state] ?? 'plain'

const yesNo = (ok: boolean | undefined, good = 'yes', bad = 'no'): Child => ok === undefined ? null : badge(ok ? good : bad, ok ? 'good' : 'bad')
const ms = (v: number | null): string => v === null ? 'not measured yet' : `${v > 0 ? '+' : ''}${v} ms`

export async function remotePage (ctx: PageContext): Promise<void> {
  const [up, ready] = await Promise.allSettled([api<Upstream>('GET', '/v1/upstream'), publicGet<Ready>('/readyz', [503])])
  const parts: Child[] = [h('h1', {}, 'The remote')]
  if (up.status === 'fulfilled') parts.push(...upstreamSections(up.value))
  else parts.push(section('Card', problem(up.reason)))
  if (ready.status === 'fulfilled') parts.push(...readySections(ready.value))
  else parts.push(section('Readiness', problem(ready.reason)))
  fill(ctx.main, ...parts)
}

function upstreamSections (u: Upstream): Child[] {
  const card = u.card === null
    ? h('p', { class: 'problem' }, 'No card held: discovery has not fetched one yet.')
    : facts([
      ['name', h('strong', { 'data-card-name': '' }, u.card.name)],
      ['version', u.card.version],
      ['protocol version (card)', u.card.protocolVersion],
      ['path', h('code', {}, u.card.path)],
      ['sha256', h('code', { class: 'hash' }, u.card.sha256)],
      ['skill ids', u.card.skillIds.length === 0 ? 'none' : u.card.skillIds.join(', ')],
      ['origin', u.cardUrlMismatch ? badge('the card names another origin (reported, never followed)', 'warn') : 'the configured one']
    ])
  const why = u.mode === 'controller'
    ? h('p', {}, 'Every prerequisite of controller mode is met: the mutation routes answer.')
    : h('div', {}, h('p', {}, 'Observer: every mutation answers 503 capability_unavailable. Missing:'), h('ul', {}, ...u.missingPrerequisites.map((m) => h('li', {}, m))))
  const caps = Object.entries(u.capabilities).sort(([a], [b]) => a.localeCompare(b))
    .map(([name, c]): Child[] => [h('code', {}, name), badge(c.state, tone(c.state)), c.reason])
  const protocol = u.protocol === null
    ? h('p', {}, 'No protocol chosen: no card held.')
    : h('div', {},
      facts([
        ['spoken', u.protocol.version === null ? badge('none the gateway speaks', 'bad') : `A2A ${u.protocol.version}`],
        ['why', u.protocol.reason],
        ['refused', u.protocol.refusedVersion === null ? 'none' : `${u.protocol.refusedVersion}, spoken again ${when(u.protocol.refusedUntil)}`]
      ]),
      u.protocol.interfaces.length === 0
        ? null
        : table(['binding', 'version', 'url', 'at the endpoint'], u.protocol.interfaces.map((i) => [i.protocolBinding, i.protocolVersion, h('code', {}, i.url), i.atEndpoint ? 'yes' : 'no'])))
  const sig = u.signature === null
    ? h('p', {}, 'No card, no signature.')
    : facts([['state', badge(u.signature.state, tone(u.signature.state))], ['key id', u.signature.keyId], ['algorithm', u.signature.algorithm], ['why', u.signature.reason]])
  return [
    h('div', { class: 'grid' },
      section('Card', card),
      section('Mode', badge(u.mode, tone(u.mode)), why),
      section('Discovery', facts([
        ['last refresh', when(u.lastRefreshAt)],
        ['last success', when(u.lastSuccessAt)],
        ['next refresh', when(u.nextRefreshAt)],
        ['failures in a row', String(u.consecutiveFailures)],
        ['last error', u.lastError]
      ])),
      section('Protocol version', protocol),
      section('Signature', sig)),
    section('Capabilities', table(['capability', 'state', 'why'], caps, { class: 'wide' }))
  ]
}

function readySections (r: Ready): Child[] {
  const c = r.checks
  return [h('div', { class: 'grid' },
    section('Circuit breaker', badge(c.upstreamCircuit, tone(c.upstreamCircuit)),
      h('p', {}, c.upstreamCircuit === 'closed' ? 'Reads and mutations reach the remote.' : 'Reads are refused at once with 503 and Retry-After, mutations before anything is written.')),
    section('Clock offsets', table(['peer', 'offset (peer − this replica)'], [['ledger', ms(c.clock.ledgerOffsetMs)], ['remote', ms(c.clock.remoteOffsetMs)]]),
      h('p', {}, `Margin ${c.clock.marginMs} ms (GATEWAY_LEASE_SAFETY_MS): `, yesNo(c.clock.ok, 'within', 'past it: mutations answer 503 clock_skew'))),
    section('Readiness', facts([
      ['ready', yesNo(r.ready)],
      ['draining', yesNo(!r.draining, 'no', 'yes: shutting down')],
      ['card held', yesNo(c.card)],
      ['ledger answers', yesNo(c.ledger)],
      ['Redis answers', c.redis === undefined ? 'not used' : yesNo(c.redis)],
      ['identity provider keys', c.jwtKeys === undefined ? 'no JWT callers' : yesNo(c.jwtKeys)]
    ])))]
}
