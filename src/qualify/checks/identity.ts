// Which deployment this is: the argus-supervisor profile's installation reported apart from
// its runtime enablement, and the source SHA the deployment reports (GET /health's source_sha
// or sourceSha, else the supervisor.health payload) equal to EXPECTED_SOURCE_SHA, a full
// 40-hex commit compared exactly.
import type { Check, QualifyContext } from '../context.js'
import { fail, pass, skip, type Result } from '../types.js'
import { ARGUS_URN, isObject, type Json } from '../wire.js'

const SHA = /^[0-9a-f]{40}$/

/** the Argus entry of /docs/a2a.json's extensions, when the docs list one */
function docsEntry (ctx: QualifyContext): Json | undefined {
  const list = ctx.facts.a2aDocs?.extensions
  return Array.isArray(list) ? list.find((e): e is Json => isObject(e) && e.uri === ARGUS_URN) : undefined
}

const readCodes = (ctx: QualifyContext): string[] => [...ctx.facts.reads.values()].flatMap((o) => (o.kind === 'code' ? [o.code] : []))
const readsServed = (ctx: QualifyContext): boolean => ctx.facts.reads.size > 0 && [...ctx.facts.reads.values()].every((o) => o.kind === 'payload')

function installed (ctx: QualifyContext): Result {
  const name = 'argus_profile_installed'
  if (docsEntry(ctx) !== undefined) return pass(name)
  // only an installed profile can answer that it is disabled
  if (readCodes(ctx).includes('argus_supervisor_disabled')) return pass(name)
  if (readsServed(ctx)) return skip(name, 'no route reports the profile\'s installation apart from its enablement: /docs/a2a.json lists no argus-supervisor extension, and the reads answer as enabled')
  return fail(name, 'no evidence the argus-supervisor profile is installed: /docs/a2a.json lists no argus-supervisor extension and no read answered as the profile')
}

function enabled (ctx: QualifyContext): Result {
  const name = 'argus_profile_enabled'
  const entry = docsEntry(ctx)
  if (entry !== undefined && entry.enabled === false) return fail(name, '/docs/a2a.json reports the argus-supervisor extension disabled')
  if (ctx.facts.cardProfile === 'disabled') return fail(name, 'the agent card advertises the disabled profile (general_assistance only)')
  if (readCodes(ctx).includes('argus_supervisor_disabled')) return fail(name, 'the reads answer argus_supervisor_disabled')
  if (ctx.facts.cardProfile === undefined) return fail(name, 'no agent card told which Argus profile is advertised')
  if (!readsServed(ctx)) return fail(name, 'the card advertises the Argus skills but the reads are not served (see the argus_* reads)')
  return pass(name)
}

const shaOf = (v: Json | undefined): unknown => v?.source_sha ?? v?.sourceSha

function sourceSha (ctx: QualifyContext): Result {
  const name = 'source_sha'
  let reported = shaOf(ctx.facts.health)
  let from = 'GET /health'
  if (reported === undefined) {
    const health = ctx.facts.reads.get('supervisor.health')
    reported = health?.kind === 'payload' ? shaOf(health.payload) : undefined
    from = 'the supervisor.health payload'
  }
  if (reported === undefined) return fail(name, 'neither GET /health nor the supervisor.health payload reports source_sha or sourceSha')
  // the value is printed only once it is known to be 40 hex characters, never as free text
  if (typeof reported !== 'string' || !SHA.test(reported)) return fail(name, `${from} reports a source SHA that is not a full 40-hex commit in lower case`)
  if (reported !== ctx.config.expectedSourceSha) return fail(name, `${from} reports ${reported}; EXPECTED_SOURCE_SHA is ${ctx.config.expectedSourceSha}`)
  return pass(name)
}

export const identityChecks: Check[] = [
  { name: 'argus_profile_installed', run: async (ctx) => installed(ctx) },
  { name: 'argus_profile_enabled', run: async (ctx) => enabled(ctx) },
  { name: 'source_sha', run: async (ctx) => sourceSha(ctx) }
]
