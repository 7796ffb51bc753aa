// Who a caller is, for every ownership decision — a controller binding, a request record, a
// front-door send and its task (docs/design.md#controller-bindings, docs/design.md#request-records):
// a static caller by its name, a caller from the identity provider by its token's issuer and
// subject. Names alone are not enough: two issuers may share a subject, and a JWT caller's name is
// a claim the IdP chose, which two users may share (a client's `azp`, a `preferred_username`).
import type { Caller } from '../../schemas/callers.js'

export const callerIdentity = (caller: Caller): string => caller.identity ?? `static:${caller.name}`

/**
 * the identity that may own something, or undefined for a caller from the identity provider whose
 * token had no subject: its name is all it has, and a name owns nothing (such a caller cannot
 * mutate: control needs an identity; its front-door reads are not de-duplicated)
 */
export const ownerIdentity = (caller: Caller): string | undefined =>
  caller.identity ?? (caller.name.startsWith('jwt:') ? undefined : `static:${caller.name}`)
