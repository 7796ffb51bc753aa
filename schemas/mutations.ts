// The mutation vocabulary (docs/design.md#ledger): the logical operations the gateway sends and
// the states a record goes through, as plain tuples. One source for the REST schemas
// (schemas/control.ts), the ledger's interface (src/ledger/types.ts) and the control plane; a
// leaf that imports nothing, so a schema needs no ledger code for its enums.

/** the logical mutations the gateway sends (REST route → remote operation) */
export const MUTATION_OPERATIONS = ['claim', 'renew', 'release', 'submit', 'intervene', 'cancel', 'fence'] as const
export type MutationOperation = typeof MUTATION_OPERATIONS[number]

/**
 * pending: committed, maybe sent, outcome not yet known (owner is waiting)
 * applied / rejected: the outcome classes of a sent mutation
 * ambiguous: the remote may or may not have applied it; blocks its campaign until resolved
 * not_applied: an ambiguous record resolved as never applied (reconcile or acknowledge)
 */
export const RECORD_STATES = ['pending', 'applied', 'rejected', 'ambiguous', 'not_applied'] as const
export type RecordState = typeof RECORD_STATES[number]

/** the states that block a campaign until they are resolved */
export const UNRESOLVED_STATES = ['pending', 'ambiguous'] as const satisfies readonly RecordState[]
export type UnresolvedState = typeof UNRESOLVED_STATES[number]
