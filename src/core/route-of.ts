// A request's route options, read from Fastify once (docs/design.md#hot-path): `request.routeOptions`
// is a getter that builds and freezes a new object on every read (what that costs:
// BENCHMARKS.md#hot-path-choices), and the authentication, the metrics and the access line each
// need it. The object is kept on the request, which holds the route's context anyway.
import type { FastifyRequest } from 'fastify'

type RouteOptions = FastifyRequest['routeOptions']
const ROUTE = Symbol('oogw.routeOptions')
type Held = object & { [ROUTE]?: RouteOptions }

/** `request.routeOptions`, read once per request */
export function routeOf (request: FastifyRequest): RouteOptions {
  const held = request as Held
  const known = held[ROUTE]
  if (known !== undefined) return known
  const read = request.routeOptions
  held[ROUTE] = read
  return read
}

/** the route template of something logged as a request: what routeOf read, else its own `routeOptions` */
export function routeUrlOf (req: { routeOptions?: { url?: string } }): string | undefined {
  return ((req as Held)[ROUTE] ?? req.routeOptions)?.url
}
