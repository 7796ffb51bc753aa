// The simulator's options resolved once, at start: defaults filled in, bad values refused with
// a TypeError, the 'campaign-control' profile read as openoperator with the extension served.
// Everything after start reads these, never SimulatorOptions.
import { resolveControl } from './extensions/control-options.js'
import type { ResolvedControl } from './extensions/control-options.js'
import { PROFILES } from './profiles.js'
import type { AuthScheme, CardCacheOptions, CardTransform, SimulatorOptions, SimulatorProtocol, WireProfile } from './types.js'

export const DEFAULT_SOURCE_SHA = '5e1f0c0ffee0123456789abcdef0123456789abc'

/** the campaign list of a simulator given none */
const DEFAULT_CAMPAIGNS: Array<Record<string, unknown>> = [
  { campaign_id: 'camp-1', stage: 'train', revision: 7, blocked: false },
  { campaign_id: 'camp-2', stage: 'eval', revision: 3, blocked: false }
]

export const SIMULATOR_PROTOCOLS: readonly SimulatorProtocol[] = ['v0.3', 'v1.0', 'dual']

export interface ResolvedOptions {
  profile: WireProfile
  secret: string | undefined
  authSchemes: AuthScheme[]
  argusEnabled: boolean
  /** What `campaign.list` answers at start. */
  campaigns: Array<Record<string, unknown>>
  sourceSha: string
  taskSteps: number
  /** Polls an Argus read's task needs: taskSteps when given, else the profile's (0 for openoperator: reads bypass the model). */
  argusTaskSteps: number
  initialCard: CardTransform | undefined
  initialCardAfterSigning: CardTransform | undefined
  /** Set when campaign control is served. */
  control: ResolvedControl | undefined
  protocol: SimulatorProtocol
  /** Undefined: no caching headers. */
  cardCache: Required<CardCacheOptions> | undefined
}

export function resolveOptions (opts: SimulatorOptions): ResolvedOptions {
  const requested = opts.profile ?? 'openoperator'
  const profile: WireProfile = requested === 'campaign-control' ? 'openoperator' : requested
  const controlOptions = opts.campaignControl ?? (requested === 'campaign-control' ? {} : undefined)
  const taskSteps = opts.taskSteps ?? 2
  if (!Number.isInteger(taskSteps) || taskSteps < 0) throw new TypeError('taskSteps must be a non-negative integer')
  const protocol = opts.protocol ?? 'v0.3'
  if (!SIMULATOR_PROTOCOLS.includes(protocol)) throw new TypeError(`protocol must be one of ${SIMULATOR_PROTOCOLS.join(', ')}`)
  const sourceSha = opts.sourceSha ?? DEFAULT_SOURCE_SHA
  if (!/^[0-9a-f]{40}$/.test(sourceSha)) throw new TypeError('sourceSha must be 40 lower-case hex characters')
  return {
    profile,
    secret: opts.secret,
    authSchemes: opts.authSchemes ?? ['bearer', 'x-api-key'],
    argusEnabled: opts.argusEnabled ?? true,
    campaigns: opts.campaigns ?? DEFAULT_CAMPAIGNS,
    sourceSha,
    taskSteps,
    argusTaskSteps: opts.taskSteps ?? PROFILES[profile].argusTaskSteps,
    initialCard: opts.card,
    initialCardAfterSigning: opts.cardAfterSigning,
    control: controlOptions === undefined ? undefined : resolveControl(controlOptions, protocol),
    protocol,
    cardCache: resolveCardCache(opts.cardCache, protocol)
  }
}

// The SDK's card handler always sends caching headers (max-age 3600); today's v0.3 remote sends none.
function resolveCardCache (cache: CardCacheOptions | undefined, protocol: SimulatorProtocol): Required<CardCacheOptions> | undefined {
  if (cache === undefined && protocol === 'v0.3') return undefined
  const maxAgeSeconds = cache?.maxAgeSeconds ?? 3600
  if (!Number.isInteger(maxAgeSeconds) || maxAgeSeconds < 0) throw new TypeError('cardCache.maxAgeSeconds must be a non-negative integer')
  return { maxAgeSeconds, etag: cache?.etag ?? true }
}
