// Controller bindings for admins (docs/design.md#controller-bindings): the ledger binds each
// controller id to the first caller identity that used it, for every replica; here an admin
// lists the bindings and removes one, so that another identity (a rotated client, a new
// subject) may bind the id. Ledger only: nothing is sent to the remote.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { GatewayError } from '../src/core/errors.js'
import { ControllerBindingListSchema, ControllerParamsSchema, ControllerRemovedSchema } from '../schemas/admin.js'
import { AUTHENTICATED, USES_LEDGER, WITH_PATH_PARAMS, answers } from '../schemas/responses.js'

const admin: FastifyPluginAsyncZod = async (app) => {
  app.get('/v1/admin/controllers', {
    config: { scope: 'admin' },
    schema: {
      operationId: 'listControllerBindings',
      tags: ['admin'],
      summary: 'The controller ids bound to a caller identity, in controller id order',
      description: 'Ledger only. A controller id is held by the first caller identity that used it in a mutation; another identity presenting it is 403 controller_conflict.',
      querystring: z.strictObject({}),
      ...answers({
        200: { schema: ControllerBindingListSchema, description: 'Every binding (none: an empty list).' }
      }, [...AUTHENTICATED, ...USES_LEDGER])
    }
  }, async () => {
    const bindings = await app.ledger.listControllerBindings()
    return { controllers: bindings.map((b) => ({ controllerId: b.controllerId, identity: b.identity, caller: b.caller, boundAt: new Date(b.boundAt).toISOString() })) }
  })

  app.delete('/v1/admin/controllers/:controllerId', {
    config: { scope: 'admin' },
    schema: {
      operationId: 'removeControllerBinding',
      tags: ['admin'],
      summary: 'Remove a controller id\'s binding, in any letter case',
      description: 'Ledger only. The next caller identity to use the id in a mutation binds it. Leases the remote holds under the id are untouched.',
      params: ControllerParamsSchema,
      querystring: z.strictObject({}),
      ...answers({
        200: { schema: ControllerRemovedSchema, description: 'The binding is gone.' }
      }, [...AUTHENTICATED, ...WITH_PATH_PARAMS, ...USES_LEDGER, 'not_found'])
    }
  }, async (request) => {
    const { controllerId } = request.params
    if (!await app.ledger.removeControllerBinding(controllerId)) throw new GatewayError('not_found', { message: 'No binding holds this controller id.' })
    // who freed an id, for the audit trail: the id is ASCII, the admin's name holds no control character
    request.log.info({ event: 'controller-unbound', controllerId, by: request.caller!.name }, 'controller binding removed')
    return { controllerId, removed: true as const }
  })
}

export default admin
