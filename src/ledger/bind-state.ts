// How a store's role files become a role (docs/design.md#ledger): each file is a set of named
// functions whose first argument is the store's state (its database, its statements, its options),
// and the factory binds them to one state. The role's interface, as the assembler's return type,
// checks every signature.

/** each function of `F` without its first argument, the state */
export type Bound<S, F> = { [K in keyof F]: F[K] extends (state: S, ...args: infer A) => infer R ? (...args: A) => R : never }

/** the functions of `fns`, each bound to `state` */
export function bindState<S, F extends Record<string, (state: S, ...args: never) => unknown>> (state: S, fns: F): Bound<S, F> {
  const bound: Record<string, unknown> = {}
  for (const [name, fn] of Object.entries(fns)) bound[name] = (fn as (...args: unknown[]) => unknown).bind(undefined, state)
  return bound as Bound<S, F>
}
