// The static callers (docs/design.md#callers): the digests of GATEWAY_CALLERS, or of
// GATEWAY_CALLERS_FILE re-read on SIGHUP and when the file changes (src/core/operator-files.ts: off the
// event loop, capped at 1 MiB). A re-read is checked whole with the schema the start uses before
// anything changes: a bad file keeps the callers in use and logs why (the problems, never a
// token). The swap replaces one reference, so a request sees the old set or the new one, never a
// mix. Inline GATEWAY_CALLERS cannot change without a restart. The text is the callers' array, or
// an object of the callers and a grants table keyed by JWT identity (docs/design.md#grants),
// swapped with them.
import { controllerKey, type Caller, type Grants } from '../../schemas/callers.js'
import { parseCallers } from '../config/callers.js'
import { indexCallers, type CallerIndex } from './tokens.js'
import { watchOperatorFile, type FileRefusal } from '../core/operator-files.js'

/** one generation of static callers: looked up by digest, and the controller ids they hold */
export interface CallerSet {
  index: CallerIndex
  /**
   * the controllerIds of static callers with the control scope, in `controllerKey` form (letter
   * case aside): a JWT caller may not claim one (docs/design.md#controller-bindings)
   */
  controllerIds: ReadonlySet<string>
  /** the static callers themselves, in the file's order (the admins' listing) */
  callers: readonly Caller[]
  /** grants by the identity of a caller from the identity provider, replacing its claims' (docs/design.md#grants) */
  identityGrants: ReadonlyMap<string, Grants>
}

const NO_GRANTS: ReadonlyMap<string, Grants> = new Map()

export interface StaticCallers {
  current: () => CallerSet
  /** re-reads the file now (SIGHUP); true when a new set is in use. Inline callers: false */
  reload: () => Promise<boolean>
  close: () => void
}

export function callerSet (callers: readonly Caller[], identityGrants: ReadonlyMap<string, Grants> = NO_GRANTS): CallerSet {
  return {
    index: indexCallers(callers),
    controllerIds: new Set(callers.filter((c) => c.scopes.includes('control') && c.controllerId !== undefined).map((c) => controllerKey(c.controllerId!))),
    callers,
    identityGrants
  }
}

export function fixedCallers (callers: readonly Caller[], identityGrants?: ReadonlyMap<string, Grants>): StaticCallers {
  const set = callerSet(callers, identityGrants)
  return { current: () => set, reload: async () => false, close: () => {} }
}

export interface CallersFileOptions {
  path: string
  initial: readonly Caller[]
  /** the grants table the initial text held */
  initialGrants?: ReadonlyMap<string, Grants> | undefined
  log: { info: (o: object, m: string) => void; warn: (o: object, m: string) => void }
  /** a refused re-read, for gateway_operator_file_refusals_total */
  onRefused: (reason: FileRefusal) => void
  pollMs?: number
}

/** re-read on SIGHUP (reload) and once a change has held still for a poll (src/core/operator-files.ts) */
export function callersFromFile (o: CallersFileOptions): StaticCallers {
  const file = watchOperatorFile<CallerSet & { count: number }>({
    variable: 'GATEWAY_CALLERS_FILE',
    path: o.path,
    initial: { ...callerSet(o.initial, o.initialGrants), count: o.initial.length },
    parse: (text) => {
      const parsed = parseCallers(text.replace(/\r?\n$/, ''), 'GATEWAY_CALLERS_FILE')
      return 'problems' in parsed ? parsed : { value: { ...callerSet(parsed.callers, parsed.identityGrants), count: parsed.callers.length } }
    },
    describe: (set) => ({ callers: set.count }),
    log: o.log,
    onRefused: o.onRefused,
    pollMs: o.pollMs
  })
  return { current: file.current, reload: file.reload, close: file.close }
}
