// The Argus reads (docs/design.md#fasta2a-polling, docs/design.md#coalescing): capability check
// without a call, the seed envelope, polling of a FastA2A `submitted`/`working` task within the
// read timeout, safe codes only, and coalescing of identical reads in flight.
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { isTask, type A2aTask } from '../../schemas/a2a.js'
import type { UpstreamClient } from '../upstream/client.js'
import { GatewayError } from '../core/errors.js'
import type { Discovery } from '../discovery/discovery.js'
import type { ArgusCapability } from '../discovery/capabilities.js'
import { ARGUS_HEADERS, buildArgusParams, type ArgusOperation } from './envelope.js'
import { payloadError, payloadOfMessage, payloadOfTask, rpcErrorArgusCode } from './extract.js'
import { readFailure } from './read-errors.js'
import { readRpc } from './read-rpc.js'
import { fetchTask } from './fetch-task.js'
import { coalesced } from './coalesce.js'

export const CAPABILITY_OF: Record<ArgusOperation, ArgusCapability> = {
  'supervisor.health': 'argus.supervisor.health',
  'supervisor.status': 'argus.supervisor.status',
  'campaign.list': 'argus.campaign.list'
}

const POLLABLE = new Set(['submitted', 'working'])
const FAILED = new Set(['failed', 'rejected', 'canceled'])

export interface ArgusReadResult { operation: ArgusOperation; requestId: string; result: Record<string, unknown> }

export interface ArgusReaderOptions {
  client: UpstreamClient
  discovery: Discovery
  readTimeoutMs: number
  maxTaskResponseBytes: number
  /** identical reads in flight share one upstream call (docs/design.md#coalescing); default true */
  coalesce?: boolean
  onCoalesced?: () => void
}

export interface ArgusReader {
  read: (operation: ArgusOperation) => Promise<ArgusReadResult>
  /** one `tasks/get` with historyLength 0 (shared with the task route, coalesced too) */
  getTask: (taskId: string, deadline: number) => Promise<A2aTask>
}

/** a `tasks/get` as the coalescer takes it: one argument, keyed by the task */
interface TaskGet { taskId: string; deadline: number }

/** what one reader holds (createArgusReader): its options and its two upstream calls, coalesced unless turned off */
interface ReaderState {
  readonly o: ArgusReaderOptions
  readonly argusRead: (operation: ArgusOperation) => Promise<ArgusReadResult>
  /** shared by the task route and the polls (settle) */
  readonly tasksGet: (a: TaskGet) => Promise<A2aTask>
}

export function createArgusReader (o: ArgusReaderOptions): ArgusReader {
  const uncachedRead = (operation: ArgusOperation): Promise<ArgusReadResult> => argusRead(r, operation)
  // fetchTask's own promise, not one more async frame around it (docs/design.md#hot-path)
  const tasksGet = (a: TaskGet): Promise<A2aTask> => fetchTask(o, a.taskId, a.deadline)
  const r: ReaderState = o.coalesce === false
    ? { o, argusRead: uncachedRead, tasksGet }
    : { o, argusRead: coalesced((op: ArgusOperation) => op, uncachedRead, o.onCoalesced), tasksGet: coalesced((a: TaskGet) => a.taskId, tasksGet, o.onCoalesced) }
  return {
    read: (operation) => read(r, operation),
    getTask: (taskId, deadline) => r.tasksGet({ taskId, deadline })
  }
}

/** the coalesced call's promise itself (src/argus/coalesce.ts): no promise per waiter here either */
function read (r: ReaderState, operation: ArgusOperation): Promise<ArgusReadResult> {
  const cap = r.o.discovery.capability(CAPABILITY_OF[operation])
  if (cap.state !== 'available') {
    return Promise.reject(new GatewayError('capability_unavailable', { missingPrerequisites: [cap.reason] }))
  }
  return r.argusRead(operation)
}

/** one Argus read, uncoalesced: the seed envelope sent, its answer a message or a task settled */
async function argusRead (r: ReaderState, operation: ArgusOperation): Promise<ArgusReadResult> {
  const { o } = r
  const requestId = `argus-${randomUUID()}`
  const deadline = Date.now() + o.readTimeoutMs
  const wire = o.discovery.wire()
  const sent = await readRpc(o, wire, {
    call: { method: wire.method('message/send'), id: requestId, params: wire.sendParams(buildArgusParams(operation, requestId)), op: operation, headers: wire.headers(ARGUS_HEADERS), deadline },
    capability: CAPABILITY_OF[operation],
    requestId,
    // a safe Argus code the remote's error carries (docs/design.md#argus-reads)
    rejected: (error) => {
      const code = rpcErrorArgusCode(error)
      return code === undefined ? undefined : new GatewayError(code, { requestId })
    }
  })
  // in v0.3's shape whatever the remote speaks (docs/design.md#protocol-versions)
  const result = wire.sendResult(sent) as Record<string, unknown> | null
  if (result !== null && typeof result === 'object' && result.kind === 'message') {
    const payload = payloadOfMessage(result)
    if (payload !== undefined) o.discovery.confirm('a2a.message.send', wire.version)
    return { operation, requestId, result: payloadOrError(payload, requestId) }
  }
  if (!isTask(result)) throw new GatewayError('upstream_invalid_response', { requestId })
  o.discovery.confirm('a2a.message.send', wire.version)
  return { operation, requestId, result: await settle(r, result, requestId, deadline) }
}

/** a FastA2A task polled until it stops, within the read's deadline (docs/design.md#fasta2a-polling) */
async function settle (r: ReaderState, task: A2aTask, requestId: string, deadline: number): Promise<Record<string, unknown>> {
  let delay = 100
  for (;;) {
    const state = task.status.state
    if (state === 'completed') {
      if ((task.artifacts ?? []).length > 0) r.o.discovery.confirm('a2a.artifacts')
      return payloadOrError(payloadOfTask(task), requestId)
    }
    if (FAILED.has(state)) {
      // never a failed task's data as a success: only its recognised code survives
      const payload = payloadOfTask(task)
      const code = payload !== undefined ? payloadError(payload) : undefined
      throw new GatewayError(code !== undefined && code !== 'other' ? code : 'upstream_rejected', { requestId })
    }
    if (!POLLABLE.has(state)) throw new GatewayError('upstream_unexpected_state', { requestId })
    if (Date.now() + delay >= deadline) throw new GatewayError('upstream_timeout', { requestId })
    await sleep(delay)
    delay = Math.min(delay * 2, 1000)
    try {
      task = await r.tasksGet({ taskId: task.id, deadline })
    } catch (err) {
      const e = readFailure(err)
      // the task the remote just named has vanished: that is the remote's inconsistency, not a 404 of ours
      throw new GatewayError(e.code === 'not_found' ? 'upstream_invalid_response' : e.code, { requestId, cause: e })
    }
  }
}

function payloadOrError (payload: Record<string, unknown> | undefined, requestId: string): Record<string, unknown> {
  if (payload === undefined) throw new GatewayError('upstream_invalid_response', { requestId })
  const err = payloadError(payload)
  if (err === 'other') throw new GatewayError('upstream_rejected', { requestId })
  if (err !== undefined) throw new GatewayError(err, { requestId })
  return payload
}
