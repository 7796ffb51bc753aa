// One `tasks/get` with historyLength 0 (docs/design.md#task-projection): the single copy of the
// call, its byte budget and its validation. The reader coalesces it for the task route and the
// polls; the control plane's cancel calls it directly, never coalesced (a decision reads fresh).
import { isTask, type A2aTask } from '../../schemas/a2a.js'
import { RPC_CODES, type RpcErrorObject } from '../../schemas/jsonrpc.js'
import { readAnswer, sendRead, type ReadRpc } from './read-rpc.js'
import { readFailure } from './read-errors.js'
import type { Discovery } from '../discovery/discovery.js'
import { GatewayError } from '../core/errors.js'
import type { RpcResult, UpstreamClient } from '../upstream/client.js'

export interface TaskFetchDeps { client: UpstreamClient; discovery: Discovery; maxTaskResponseBytes: number }

/** -32001 is the contract's 404; made once, not a closure per read */
const notFound = (error: RpcErrorObject): GatewayError | undefined => error.code === RPC_CODES.taskNotFound ? new GatewayError('not_found', { message: 'The task does not exist.' }) : undefined

/** the remote's task, or a contract error: -32001 → 404, -32601 → 503 (and the capability marked) */
export async function fetchTask (d: TaskFetchDeps, taskId: string, deadline: number): Promise<A2aTask> {
  const wire = d.discovery.wire()
  const read: ReadRpc = {
    call: { method: wire.method('tasks/get'), params: { id: taskId, historyLength: 0 }, op: 'tasks.get', maxBytes: d.maxTaskResponseBytes, deadline, budgeted: true, headers: wire.headers() },
    capability: 'a2a.tasks.get',
    rejected: notFound
  }
  // readRpc's two halves, the call awaited here: its async frame and await were one more of each a read
  let r: RpcResult
  try {
    r = await sendRead(d, read)
  } catch (err) {
    throw readFailure(err)
  }
  const result = readAnswer(d, wire, read, r)
  // TaskSchema, checked by hand (docs/design.md#hot-path), on v0.3's shape (docs/design.md#protocol-versions)
  const task = wire.task(result)
  if (!isTask(task) || task.id !== taskId) throw new GatewayError('upstream_invalid_response')
  d.discovery.confirm('a2a.tasks.get', wire.version)
  return task
}
