// One `tasks/get` with historyLength 0 (docs/design.md#task-projection): the single copy of the
// call, its byte budget and its validation. The reader coalesces it for the task route and the
// polls; the control plane's cancel calls it directly, never coalesced (a decision reads fresh).
import { isTask, type A2aTask } from '../../schemas/a2a.js'
import { RPC_CODES } from '../../schemas/jsonrpc.js'
import { readFailure } from '../argus/read-errors.js'
import type { Discovery } from '../discovery/discovery.js'
import { GatewayError } from '../core/errors.js'
import type { RpcResult, UpstreamClient } from '../upstream/client.js'
import { versionRefused } from '../discovery/version-refused.js'

export interface TaskFetchDeps { client: UpstreamClient; discovery: Discovery; maxTaskResponseBytes: number }

/** the remote's task, or a contract error: -32001 → 404, -32601 → 503 (and the capability marked) */
export async function fetchTask (d: TaskFetchDeps, taskId: string, deadline: number): Promise<A2aTask> {
  const wire = d.discovery.wire()
  let r: RpcResult
  try {
    r = await d.client.rpc({ method: wire.method('tasks/get'), params: { id: taskId, historyLength: 0 }, op: 'tasks.get', kind: 'read', maxBytes: d.maxTaskResponseBytes, deadline, budgeted: true, headers: wire.headers() })
  } catch (err) {
    throw readFailure(err)
  }
  if (!r.ok) {
    const refused = versionRefused(d.discovery, wire, r)
    if (refused !== undefined) throw refused
    if (r.error.code === RPC_CODES.methodNotFound) {
      d.discovery.markMethodNotFound('a2a.tasks.get')
      throw new GatewayError('capability_unavailable')
    }
    if (r.error.code === RPC_CODES.taskNotFound) throw new GatewayError('not_found', { message: 'The task does not exist.' })
    throw new GatewayError('upstream_rejected')
  }
  // TaskSchema, checked by hand (docs/design.md#hot-path), on v0.3's shape (docs/design.md#protocol-versions)
  const task = wire.task(r.result)
  if (!isTask(task) || task.id !== taskId) throw new GatewayError('upstream_invalid_response')
  d.discovery.confirm('a2a.tasks.get', wire.version)
  return task
}
