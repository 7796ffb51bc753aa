// One `tasks/get` with historyLength 0 (docs/design.md#task-projection): the single copy of the
// call, its byte budget and its validation. The reader coalesces it for the task route and the
// polls; the control plane's cancel calls it directly, never coalesced (a decision reads fresh).
import { isTask, type A2aTask } from '../../schemas/a2a.js'
import { RPC_CODES } from '../../schemas/jsonrpc.js'
import { readFailure } from '../argus/read-errors.js'
import type { Discovery } from '../discovery/discovery.js'
import { GatewayError } from '../errors.js'
import type { RpcResult, UpstreamClient } from '../upstream/client.js'

export interface TaskFetchDeps { client: UpstreamClient; discovery: Discovery; maxTaskResponseBytes: number }

/** the remote's task, or a contract error: -32001 → 404, -32601 → 503 (and the capability marked) */
export async function fetchTask (d: TaskFetchDeps, taskId: string, deadline: number): Promise<A2aTask> {
  let r: RpcResult
  try {
    r = await d.client.rpc({ method: 'tasks/get', params: { id: taskId, historyLength: 0 }, op: 'tasks.get', kind: 'read', maxBytes: d.maxTaskResponseBytes, deadline, budgeted: true })
  } catch (err) {
    throw readFailure(err)
  }
  if (!r.ok) {
    if (r.error.code === RPC_CODES.methodNotFound) {
      d.discovery.markMethodNotFound('a2a.tasks.get')
      throw new GatewayError('capability_unavailable')
    }
    if (r.error.code === RPC_CODES.taskNotFound) throw new GatewayError('not_found', { message: 'The task does not exist.' })
    throw new GatewayError('upstream_rejected')
  }
  // TaskSchema, checked by hand (docs/design.md#hot-path)
  const task = r.result
  if (!isTask(task) || task.id !== taskId) throw new GatewayError('upstream_invalid_response')
  d.discovery.confirm('a2a.tasks.get')
  return task
}
