// The front door's campaign methods (docs/api.md#a2a-front-door): read_control through the control
// plane's fresh lease read, and the lease and intervention mutations — claim, renew, release,
// intervene — through the control pipeline, each answered in the method's own small shape.
import type { Caller } from '../../schemas/callers.js'
import { checkBodyRules } from '../control/rules.js'
import type { Lease } from '../control/wire.js'
import type { MutationOperation } from '../ledger/types.js'
import { isRecord, mutate, needs, type DoorState, type Obj } from './door-state.js'
import { invalidField as invalid } from './errors.js'
import type { Logical } from './framing.js'
import { campaignIdIn, requestIdIn } from './ids.js'

/** the campaign methods that are mutations, by the pipeline's name for them */
export const CAMPAIGN_MUTATIONS: Partial<Record<Logical, MutationOperation>> = { claim_control: 'claim', renew_control: 'renew', release_control: 'release', intervene: 'intervene' }

const leaseOut = (l: Lease | null): Obj | null => l === null ? null : { controller_id: l.controllerId, epoch: l.epoch, expires_at: l.expiresAt }

export async function campaign (s: DoorState, caller: Caller, logical: Logical, params: Obj): Promise<Obj> {
  checkBodyRules(params)
  const campaignId = campaignIdIn(params.campaign_id, 'params', 'campaign_id')
  if (logical === 'read_control') {
    if (Object.keys(params).length > 1) throw invalid('params', 'campaign/read_control takes campaign_id only.')
    return { lease: leaseOut(await s.control.readControl(campaignId, caller)) }
  }
  needs(caller, 'control')
  const operation = CAMPAIGN_MUTATIONS[logical]!
  const allowed = new Set(['campaign_id', 'request_id', ...(operation === 'claim' || operation === 'renew' ? ['ttl_seconds'] : []), ...(operation === 'intervene' ? ['intervention'] : [])])
  const extra = Object.keys(params).find((k) => !allowed.has(k))
  if (extra !== undefined) throw invalid('params', `${JSON.stringify(extra.slice(0, 64))} is not a parameter of this method.`)
  const requestId = requestIdIn(params.request_id, 'params', 'request_id')
  const body: Obj = { requestId }
  if (params.ttl_seconds !== undefined) body.ttlSeconds = params.ttl_seconds
  if (params.intervention !== undefined) body.intervention = params.intervention
  const a = await mutate(s, caller, operation, campaignId, body)
  if (isRecord(a.lease)) return { lease: leaseOut(a.lease as unknown as Lease) }
  if (a.released === true) return { released: true }
  if (a.accepted === true) return { accepted: true }
  // a replay of a resolved request answers its record: the request's final state
  return { request_id: requestId, state: a.state ?? null, ...(a.pruned === true ? { pruned: true } : {}) }
}
