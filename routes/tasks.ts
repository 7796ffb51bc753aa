// GET /v1/tasks/:taskId (docs/design.md#task-projection): one `tasks/get` with historyLength 0,
// projected; to a caller whose grants reach the task's campaign (docs/design.md#grants).
import type { FastifySchemaCompiler } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { GatewayError } from '../src/core/errors.js'
import { projectTaskJson } from '../src/argus/projection.js'
import { trustedSerializer } from '../src/http/trusted-serializer.js'
import { NoQuerySchema, TaskParamsSchema, TaskProjectionSchema, isNoQuery, isTaskParams } from '../schemas/task.js'
import { validatorCompiler } from '../src/http/errors.js'
import { AUTHENTICATED, PER_CAMPAIGN, UPSTREAM_READ, USES_LEDGER, WITH_PATH_PARAMS, answers } from '../schemas/responses.js'

/**
 * The route's validator: what passes is accepted by a hand check equal to the schema's verdict
 * (schemas/task.ts), without zod's parse and copy; what does not goes to the routes' validator,
 * for the same 400 and message (docs/design.md#hot-path)
 */
const taskRouteValidator: FastifySchemaCompiler<unknown> = (route) => {
  const zod = validatorCompiler(route as Parameters<typeof validatorCompiler>[0])
  const fast = route.httpPart === 'params' ? isTaskParams : route.httpPart === 'querystring' ? isNoQuery : undefined
  if (fast === undefined) return zod
  return (data) => fast(data) ? { value: data } : zod(data)
}

const tasks: FastifyPluginAsyncZod = async (app) => {
  app.get('/v1/tasks/:taskId', {
    config: { scope: 'read' },
    // written as JSON by projectTaskJson; errors by JSON.stringify, not the zod serializer (docs/design.md#hot-path)
    serializerCompiler: trustedSerializer,
    validatorCompiler: taskRouteValidator,
    schema: {
      operationId: 'getTask',
      tags: ['tasks'],
      summary: 'A task as an attempt outcome: state, campaign metadata, bounded artifacts',
      params: TaskParamsSchema,
      querystring: NoQuerySchema,
      // eslint-disable-next-line no-restricted-syntax -- the route's schema, built once at startup
      ...answers({
        200: { schema: TaskProjectionSchema, description: 'The task as the remote reports it now (tasks/get, historyLength 0), projected: history, metrics and stdout dropped, artifacts bounded. A completed state is an attempt outcome, never proof the mission was accepted.' }
      }, [...AUTHENTICATED, ...WITH_PATH_PARAMS, ...UPSTREAM_READ, ...USES_LEDGER, ...PER_CAMPAIGN, 'not_found'])
    }
  }, async (request, reply) => {
    // before anything is sent; nothing at all for a caller that reaches every campaign (docs/design.md#hot-path)
    const granted = app.control.grants.requireTask(request.caller!, request.params.taskId)
    if (granted !== undefined) await granted
    const cap = app.discovery.capability('a2a.tasks.get')
    if (cap.state === 'unavailable') throw new GatewayError('capability_unavailable', { missingPrerequisites: [cap.reason] })
    // getTask already answers in contract errors (readFailure inside the reader)
    const task = await app.argus.getTask(request.params.taskId, Date.now() + app.gatewayConfig.upstream.readTimeoutMs)
    if ((task.artifacts ?? []).length > 0) app.discovery.confirm('a2a.artifacts')
    // the JSON written as the projection is built; only the remote's values, searched for the
    // secret as they came in, and fixed text (docs/design.md#hot-path)
    reply.fromScannedRemote = true
    return reply.type('application/json; charset=utf-8').send(projectTaskJson(task))
  })
}

export default tasks
