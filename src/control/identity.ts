// Who a caller is, for controller bindings (docs/design.md#controller-bindings): a static caller by
// its name, a caller from the identity provider by its token's issuer and subject. Names alone are
// not enough: two issuers may share a subject, and a JWT caller's name is a claim the IdP chose.
import type { Caller } from '../../schemas/callers.js'

export const callerIdentity = (caller: Caller): string => caller.identity ?? `static:${caller.name}`
