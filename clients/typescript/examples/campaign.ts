// One evening of a campaign with the typed client, start to end: claim the lease, submit work,
// follow the task (renewing the lease while it runs), release the lease. Every mutation goes
// through `mutate`, which handles what a controller must handle itself: a lost connection or a
// retryable refusal (send the same request id again: the gateway never sends an id twice) and
// 504 ambiguous_write (the remote may or may not have applied it: reconcile, never resend).
//
//   GATEWAY_URL=https://gateway.example GATEWAY_TOKEN=… CAMPAIGN_ID=camp-2026-q4 npx tsx campaign.ts
//
// It exits 0 when the task completed, 1 when it ended otherwise or was still running after
// FOLLOW_SECONDS, 2 on a refusal it cannot handle.
import { randomUUID } from 'node:crypto'
import {
  createGatewayClient, mutationResult,
  type ErrorDetail, type Lease, type LeaseAnswer, type MutationResult, type ReplayBody, type RequestRecord, type TaskProjection, type TaskState
} from '@openoperator-gateway/client'

const env = (name: string): string => {
  const v = process.env[name]
  if (v === undefined || v === '') throw new Error(`set ${name}`)
  return v
}
const gateway = createGatewayClient({ baseUrl: env('GATEWAY_URL'), token: env('GATEWAY_TOKEN') })
const campaignId = env('CAMPAIGN_ID')
const work = process.env.WORK ?? 'Train the baseline on the 2026-11 split.'
const TTL_SECONDS = 600
/** how long to follow the task before leaving it running (the lease is released either way) */
const FOLLOW_SECONDS = Number(process.env.FOLLOW_SECONDS ?? 3600)
const path = { campaignId }

/** a request id of your own, made before the first send and kept until there is an outcome */
const newRequestId = (what: string): string => `${what}-${randomUUID()}`
const sleep = async (seconds: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
/** Retry-After in seconds (429, 503, 409 reconcile_too_early), or a second */
const retryAfter = (response: Response): number => Math.max(1, Number(response.headers.get('retry-after') ?? 1) || 1)

/** a refusal the program does not handle: its code is for the program, its message for people */
class Refused extends Error {
  constructor (readonly what: string, readonly detail: ErrorDetail) {
    super(`${what}: ${detail.code}: ${detail.message}`)
  }
}

/**
 * 504 ambiguous_write: the gateway asks the remote once whether it applied the request (it never
 * sends the request again). 409 reconcile_too_early: the remote may still apply it; ask again
 * after Retry-After. Answers the record, `applied` or `not_applied`.
 */
async function reconcile (requestId: string): Promise<RequestRecord> {
  for (;;) {
    const r = await gateway.POST('/v1/campaigns/{campaignId}/requests/{requestId}/reconcile', { params: { path: { campaignId, requestId } } })
    if (r.error === undefined) return r.data
    // not retryable (e.g. capability_unavailable: the remote has no request_status): an admin
    // acknowledges it (docs/runbooks/ambiguous-write.md in the gateway's repository)
    if (!r.error.error.retryable) throw new Refused(`reconcile ${requestId}`, r.error.error)
    await sleep(retryAfter(r.response))
  }
}

/**
 * Sends one mutation under one request id until it has an outcome. Answers the operation's
 * answer (or, replayed after its ambiguity was resolved, the record), or null when the remote
 * did not apply it: then the caller decides whether to send the work again, under a new id.
 */
async function mutate<D extends object> (
  requestId: string,
  send: () => Promise<{ data?: D, error?: { error: ErrorDetail }, response: Response }>
): Promise<MutationResult<D> | null> {
  for (let attempt = 1; ; attempt++) {
    let res: Awaited<ReturnType<typeof send>>
    try {
      res = await send()
    } catch (err) {
      // no answer at all (the connection was lost): the same request id again is safe
      if (attempt === 5) throw err
      console.log(`${requestId}: no answer (${String(err)}); sending it again`)
      await sleep(1)
      continue
    }
    if (res.error === undefined) {
      const result = mutationResult(res.data!)
      // a replay of a request id whose ambiguity was resolved: its record says what happened
      if (result.kind === 'resolved' && result.record.state === 'not_applied') return null
      return result
    }
    const e = res.error.error
    if (e.code === 'ambiguous_write') {
      console.log(`${requestId}: 504 ambiguous_write; reconciling`)
      const record = await reconcile(requestId)
      console.log(`${requestId}: reconciled, ${record.state}`)
      return record.state === 'applied' ? { kind: 'resolved', record } : null
    }
    if (!e.retryable) throw new Refused(requestId, e)
    await sleep(retryAfter(res.response))
  }
}

/** the lease: from the answer, or read fresh when the claim was resolved after an ambiguity (a record holds no lease) */
async function leaseOf (r: MutationResult<LeaseAnswer | ReplayBody>): Promise<Lease> {
  if (r.kind === 'answer') return r.answer.lease
  const read = await gateway.GET('/v1/campaigns/{campaignId}/control', { params: { path } })
  if (read.error !== undefined) throw new Refused('read the lease', read.error.error)
  if (read.data.lease === null) throw new Error('the campaign has no lease')
  return read.data.lease
}

async function claim (): Promise<Lease> {
  for (;;) {
    const requestId = newRequestId('claim')
    const r = await mutate(requestId, async () => await gateway.POST('/v1/campaigns/{campaignId}/control/claim', { params: { path }, body: { requestId, ttlSeconds: TTL_SECONDS } }))
    if (r !== null) return await leaseOf(r)
  }
}

async function renew (): Promise<Lease> {
  const requestId = newRequestId('renew')
  const r = await mutate(requestId, async () => await gateway.POST('/v1/campaigns/{campaignId}/control/renew', { params: { path }, body: { requestId, ttlSeconds: TTL_SECONDS } }))
  if (r === null) throw new Error(`renewal ${requestId} was not applied`)
  return await leaseOf(r)
}

/** answers the task's id; a submission the remote did not apply is sent again under a new request id */
async function submit (): Promise<string> {
  for (;;) {
    const requestId = newRequestId('submit')
    const r = await mutate(requestId, async () => await gateway.POST('/v1/campaigns/{campaignId}/submissions', {
      params: { path },
      body: { requestId, parts: [{ kind: 'text', text: work }] }
    }))
    if (r === null) continue
    const taskId = r.kind === 'answer' ? r.answer.taskId : r.kind === 'resolved' ? r.record.taskId : r.pruned.taskId
    if (taskId == null) throw new Error(`submission ${requestId} applied without a task id`)
    console.log(`submitted ${requestId}: task ${taskId}`)
    return taskId
  }
}

/** whether a task has stopped: its work is over, or it waits for what this program cannot give */
function stopped (state: TaskState): boolean {
  switch (state) {
    case 'submitted':
    case 'working':
      return false
    case 'completed': // an attempt outcome, never proof the mission was accepted
    case 'failed':
    case 'canceled':
    case 'rejected':
    case 'input-required':
    case 'auth-required':
    case 'unknown':
      return true
  }
}

/** the task once it has stopped, or as it was when FOLLOW_SECONDS ran out */
async function follow (taskId: string, lease: Lease): Promise<TaskProjection> {
  const until = Date.now() + FOLLOW_SECONDS * 1000
  let last: TaskProjection | undefined
  for (let delay = 0.2; ; delay = Math.min(delay * 2, 5)) {
    // renew while the lease still has more than half its time: a lease that lapses stops every mutation
    if (lease.expiresAt - Date.now() / 1000 < TTL_SECONDS / 2) lease = await renew()
    const r = await gateway.GET('/v1/tasks/{taskId}', { params: { path: { taskId } } })
    if (r.error !== undefined) {
      // a read is safe to repeat: 504 upstream_timeout, 503 upstream_unavailable, 429 rate_limited
      if (!r.error.error.retryable) throw new Refused(`read task ${taskId}`, r.error.error)
    } else {
      if (r.data.state !== last?.state) console.log(`task ${taskId}: ${r.data.state}`)
      last = r.data
      if (stopped(r.data.state)) return r.data
    }
    if (Date.now() + delay * 1000 > until && last !== undefined) return last
    await sleep(delay)
  }
}

async function release (): Promise<void> {
  const requestId = newRequestId('release')
  try {
    await mutate(requestId, async () => await gateway.POST('/v1/campaigns/{campaignId}/control/release', { params: { path }, body: { requestId } }))
    console.log(`released ${campaignId}`)
  } catch (err) {
    // lease_not_held, lease_expired: nothing to release
    console.log(`release ${campaignId}: ${String(err)}`)
  }
}

async function main (): Promise<number> {
  const lease = await claim()
  console.log(`claimed ${campaignId}: epoch ${lease.epoch}, until ${new Date(lease.expiresAt * 1000).toISOString()}`)
  try {
    const taskId = await submit()
    const task = await follow(taskId, lease)
    const how = stopped(task.state) ? 'ended' : `is still running after ${FOLLOW_SECONDS} s, left to run:`
    console.log(`task ${taskId} ${how} ${task.state}; artifacts: ${task.artifacts.map((a) => a.name ?? a.artifactId).join(', ') || 'none'}`)
    return task.state === 'completed' ? 0 : 1
  } finally {
    await release()
  }
}

main().then((code) => { process.exitCode = code }, (err: unknown) => {
  console.error(String(err))
  process.exitCode = 2
})
