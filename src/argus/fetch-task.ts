// One `tasks/get` with historyLength 0 (docs/design.md#task-projection): the single copy of the
// call, its byte budget and its validation. The reader coalesces it for the task route and the
// polls; the control plane's cancel calls it directly, never coalesced (a decision reads fresh).
import { isTask, type A2aTask } from '../../schemas/a2a.js'
import { RPC_CODES } from '../../schemas/jsonrpc.js'
import { readRpc } from './read-rpc.js'
import type { Discovery } from '../discovery/discovery.js'
import { GatewayError } from '../core/errors.js'
import type { UpstreamClient } from '../upstream/client.js'

export interface TaskFetchDeps { client: UpstreamClient; discovery: Discovery; maxTaskResponseBytes: number }

/** the remote's task, or a contract error: -32001 → 404, -32601 → 503 (and the capability marked) */
export async function fetchTask (d: TaskFetchDeps, taskId: string, deadline: number): Promise<A2aTask> {
  const wire = d.discovery.wire()
  const result = await readRpc(d, wire, {
    call: { method: wire.method('tasks/get'), params: { id: taskId, historyLength: 0 }, op: 'tasks.get', maxBytes: d.maxTaskResponseBytes, deadline, budgeted: true, headers: wire.headers() },
    capability: 'a2a.tasks.get',
    rejected: (error) => error.code === RPC_CODES.taskNotFound ? new GatewayError('not_found', { message: 'The task does not exist.' }) : undefined
  })
  // TaskSchema, checked by hand (docs/design.md#hot-path), on v0.3's shape (docs/design.md#protocol-versions)
  const task = wire.task(result)
  if (!isTask(task) || task.id !== taskId) throw new GatewayError('upstream_invalid_response')
  d.discovery.confirm('a2a.tasks.get', wire.version)
  return task
}
