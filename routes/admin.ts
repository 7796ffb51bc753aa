// The admins' routes. Controller bindings (docs/design.md#controller-bindings): the ledger binds
// each controller id to the first caller identity that used it, for every replica; here an admin
// lists the bindings and removes one, so that another identity (a rotated client, a new
// subject) may bind the id — not while the id holds a live lease unless the admin forces it, and
// either way with both identities in the log. Ledger only: nothing is sent to the remote. And the
// callers in use with their grants (docs/design.md#grants): names, scopes, controller ids,
// grants, identity kinds — never a token or a digest.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { callerIdentity } from '../src/control/identity.js'
import { controllerKey } from '../schemas/callers.js'
import { GatewayError } from '../src/core/errors.js'
import { CallerListSchema, ControllerBindingListSchema, ControllerParamsSchema, ControllerRemovedSchema, RemoveControllerQuerySchema } from '../schemas/admin.js'
import { reachOf } from '../src/callers/grants.js'
import { AUTHENTICATED, USES_LEDGER, WITH_PATH_PARAMS, answers } from '../schemas/responses.js'

const admin: FastifyPluginAsyncZod = async (app) => {
  app.get('/v1/admin/callers', {
    config: { scope: 'admin' },
    schema: {
      operationId: 'listCallers',
      tags: ['admin'],
      summary: 'The callers in use and their grants: names, scopes, controller ids, grants, identity kinds',
      description: 'This replica\'s callers file as last loaded (a reload takes effect at the next request), and the grants keyed by a JWT caller\'s identity. Never a token or its digest. A caller from the identity provider is listed only where the table names its identity: its scopes and claims are in each token.',
      querystring: z.strictObject({}),
      ...answers({
        200: { schema: CallerListSchema, description: 'Every static caller, in the file\'s order, and every identity of the grants table.' }
      }, [...AUTHENTICATED])
    }
  }, async () => {
    const set = app.staticCallers.current()
    const { requireGrants, jwt } = app.gatewayConfig
    return {
      requireGrants,
      jwtClaims: jwt === undefined ? null : { ...(jwt.claims.campaigns !== undefined ? { campaigns: jwt.claims.campaigns } : {}), ...(jwt.claims.projects !== undefined ? { projects: jwt.claims.projects } : {}) },
      callers: set.callers.map((c) => {
        const r = reachOf(c, requireGrants)
        return {
          name: c.name,
          kind: 'static' as const,
          identity: callerIdentity(c),
          scopes: c.scopes,
          controllerId: c.controllerId ?? null,
          expiresAt: c.expiresAt === undefined ? null : new Date(c.expiresAt).toISOString(),
          grants: c.grants ?? null,
          reach: r.all ? 'all' as const : r.granted ? 'granted' as const : 'none' as const
        }
      }),
      identities: [...set.identityGrants].map(([identity, grants]) => ({ identity, kind: 'jwt' as const, grants }))
    }
  })

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
      description: 'Ledger only. The next caller identity to use the id in a mutation binds it. While the ledger\'s lease view shows a lease under the id that has not expired on the ledger\'s clock (known or not: a lease last seen live may still be), the binding stays: 409 `controller_lease_held`, unless `force=true`. Leases the remote holds under the id are untouched either way; the removal is logged with the admin\'s identity and the binding\'s.',
      params: ControllerParamsSchema,
      querystring: RemoveControllerQuerySchema,
      ...answers({
        200: { schema: ControllerRemovedSchema, description: 'The binding is gone.' }
      }, [...AUTHENTICATED, ...WITH_PATH_PARAMS, ...USES_LEDGER, 'not_found', 'controller_lease_held'])
    }
  }, async (request) => {
    const { controllerId } = request.params
    const force = request.query.force === 'true'
    const key = controllerKey(controllerId)
    const notFound = (): GatewayError => new GatewayError('not_found', { message: 'No binding holds this controller id.' })
    if (!(await app.ledger.listControllerBindings()).some((b) => controllerKey(b.controllerId) === key)) throw notFound()
    // a lease the id holds, on the ledger's clock (docs/design.md#controller-bindings): its holder
    // may still be mutating under it, and the next identity to bind the id would act under it too
    const live = await app.ledger.liveLeasesOf(controllerId, await app.ledger.now())
    if (live.length > 0 && !force) {
      const shown = `${live.slice(0, 3).join(', ')}${live.length > 3 ? ` and ${live.length - 3} more` : ''}`
      throw new GatewayError('controller_lease_held', { message: `The controller id holds a live lease (${shown}); the binding stays. Release the lease or let it expire, or pass force=true.` })
    }
    const removed = await app.ledger.removeControllerBinding(controllerId)
    if (removed === undefined) throw notFound()
    // who freed an id and whose it was, by identity as well as name, for the audit trail: the id
    // is ASCII, names hold no control character, and the campaign ids passed their schema
    const admin = request.caller!
    const line = {
      event: 'controller-unbound',
      controllerId,
      by: admin.name,
      byIdentity: callerIdentity(admin),
      boundIdentity: removed.identity,
      boundCaller: removed.caller,
      forced: force,
      liveLeases: live.slice(0, 20)
    }
    if (live.length > 0) request.log.warn(line, 'controller binding removed while it held a live lease')
    else request.log.info(line, 'controller binding removed')
    return { controllerId, removed: true as const }
  })
}

export default admin
