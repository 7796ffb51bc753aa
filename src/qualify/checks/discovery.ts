// The seed's read-only discovery routes: /health, /docs, the machine-readable A2A docs,
// FastA2A's /a2a/docs, both agent cards (a string name and a skills array each), the skill
// ids against the enabled or disabled Argus profile (ids only, never names),
// argus_campaign_control never advertised, the protocol generation the card offers (the
// remaining checks speak it) and the card's signature state.
import type { Check, QualifyContext } from '../context.js'
import { PAGE_MAX_BYTES } from '../context.js'
import { fail, pass, skip, type Result } from '../types.js'
import { httpReason, isObject, parseJson, type Json } from '../wire.js'
import { chooseProtocol } from '../../discovery/protocol.js'
import { reportSignatures, verifyCard } from '../../discovery/card-signature.js'
import { wireFor } from '../../upstream/a2a-wire.js'

const DISABLED = ['general_assistance']
const ENABLED = ['general_assistance', 'argus_supervisor_health', 'argus_supervisor_status', 'argus_campaign_list']

async function get (ctx: QualifyContext, path: string, signal: AbortSignal): Promise<{ status: number; json: unknown }> {
  // A2A-Version asks a server of both generations for its v1.0 card (the signed form); others ignore it
  const answer = await ctx.probe.send({ method: 'GET', path: ctx.at(path), auth: 'configured', maxBytes: PAGE_MAX_BYTES, signal, headers: { 'a2a-version': '1.0' } })
  return { status: answer.status, json: answer.status === 200 ? parseJson(answer.text) : undefined }
}

function page (name: string, path: string, keep?: (ctx: QualifyContext, json: Json) => void, mustBeJson = false): Check {
  return {
    name,
    run: async (ctx, signal) => {
      const { status, json } = await get(ctx, path, signal)
      if (status !== 200) return fail(name, `GET ${path} ${httpReason(status)}; expected 200`)
      if (isObject(json)) keep?.(ctx, json)
      if (mustBeJson && !isObject(json)) return fail(name, `GET ${path} is not a JSON object`)
      return pass(name)
    }
  }
}

function card (name: string, path: string): Check {
  return {
    name,
    run: async (ctx, signal) => {
      const { status, json } = await get(ctx, path, signal)
      if (status !== 200) return fail(name, `GET ${path} ${httpReason(status)}; expected 200`)
      if (!isObject(json)) return fail(name, `GET ${path} is not a JSON object`)
      if (typeof json.name !== 'string' || json.name === '') return fail(name, `the card at ${path} has no string name`)
      if (!Array.isArray(json.skills)) return fail(name, `the card at ${path} has no skills array`)
      const ids = json.skills.map((s) => (isObject(s) && typeof s.id === 'string' ? s.id : undefined))
      if (ids.some((id) => id === undefined)) return fail(name, `a skill of the card at ${path} has no string id`)
      ctx.facts.cards.push({ path, card: json, skillIds: [...new Set(ids as string[])].sort() })
      return pass(name)
    }
  }
}

/** the card the gateway reads first: agent-card.json, else agent.json */
const primaryCard = (ctx: QualifyContext): Json | undefined =>
  (ctx.facts.cards.find((c) => c.path.endsWith('/agent-card.json')) ?? ctx.facts.cards[0])?.card

function protocolVersion (ctx: QualifyContext): Result {
  const name = 'protocol_version'
  const card = primaryCard(ctx)
  if (card === undefined) return fail(name, 'no valid agent card was read')
  const choice = chooseProtocol(card, ctx.config.origin, `${ctx.config.prefix}/a2a`)
  if (choice.version === undefined) return fail(name, choice.reason)
  ctx.rpc.wire = wireFor(choice.version)
  return pass(name, `A2A ${choice.version}: ${choice.reason}`)
}

async function cardSignature (ctx: QualifyContext): Promise<Result> {
  const name = 'card_signature'
  const card = primaryCard(ctx)
  if (card === undefined) return fail(name, 'no valid agent card was read')
  if (ctx.config.cardJwks === undefined) return skip(name, reportSignatures(card).reason)
  const r = await verifyCard(card, ctx.config.cardJwks)
  return r.state === 'verified' ? pass(name, r.reason) : fail(name, r.reason)
}

const sameSet = (a: string[], b: string[]): boolean => a.length === b.length && [...b].sort().every((id, i) => a[i] === id)

function argusSkills (ctx: QualifyContext): Result {
  const name = 'argus_skills'
  if (ctx.facts.cards.length === 0) return fail(name, 'no valid agent card was read')
  const profiles = new Set<string>()
  for (const c of ctx.facts.cards) {
    if (sameSet(c.skillIds, ENABLED)) profiles.add('enabled')
    else if (sameSet(c.skillIds, DISABLED)) profiles.add('disabled')
    else {
      // the expected ids are the tool's; the remote's other ids are only counted
      const missing = ENABLED.filter((id) => !c.skillIds.includes(id))
      const unexpected = c.skillIds.filter((id) => !ENABLED.includes(id)).length
      return fail(name, `the card at ${c.path} matches neither Argus profile (general_assistance alone, or with argus_supervisor_health, argus_supervisor_status, argus_campaign_list): missing ${missing.length === 0 ? 'none' : missing.join(', ')}; ${unexpected} other skill id(s)`)
    }
  }
  if (profiles.size > 1) return fail(name, 'the two agent cards advertise different Argus profiles')
  ctx.facts.cardProfile = profiles.has('enabled') ? 'enabled' : 'disabled'
  return pass(name)
}

export const discoveryChecks: Check[] = [
  page('health', '/health', (ctx, json) => { ctx.facts.health = json }),
  page('docs', '/docs'),
  page('a2a_docs', '/docs/a2a.json', (ctx, json) => { ctx.facts.a2aDocs = json }, true),
  page('a2a_library_docs', '/a2a/docs'),
  card('agent_card', '/a2a/.well-known/agent.json'),
  card('agent_card_compat', '/a2a/.well-known/agent-card.json'),
  { name: 'argus_skills', run: async (ctx) => argusSkills(ctx) },
  { name: 'protocol_version', run: async (ctx) => protocolVersion(ctx) },
  { name: 'card_signature', run: async (ctx) => await cardSignature(ctx) },
  {
    name: 'argus_campaign_control_not_advertised',
    run: async (ctx) => {
      const name = 'argus_campaign_control_not_advertised'
      if (ctx.facts.cards.length === 0) return fail(name, 'no valid agent card was read')
      const hit = ctx.facts.cards.find((c) => c.skillIds.includes('argus_campaign_control'))
      return hit === undefined ? pass(name) : fail(name, `the card at ${hit.path} advertises the skill argus_campaign_control`)
    }
  }
]
