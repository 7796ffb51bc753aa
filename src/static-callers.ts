// The static callers (docs/design.md#callers): the digests of GATEWAY_CALLERS, or of
// GATEWAY_CALLERS_FILE re-read on SIGHUP and when the file changes. A re-read is checked whole
// with the schema the start uses before anything changes: a bad file keeps the callers in use
// and logs why (the problems, never a token). The swap replaces one reference, so a request sees
// the old set or the new one, never a mix. Inline GATEWAY_CALLERS cannot change without a restart.
import { readFileSync } from 'node:fs'
import { fileStamp } from './file-stamp.js'
import { CallersSchema, controllerKey, type Caller } from '../schemas/callers.js'
import { indexCallers, type CallerIndex } from './caller-tokens.js'
import { READABLE, configLines } from './validation.js'

/** one generation of static callers: looked up by digest, and the controller ids they hold */
export interface CallerSet {
  index: CallerIndex
  /**
   * the controllerIds of static callers with the control scope, in `controllerKey` form (letter
   * case aside): a JWT caller may not claim one (docs/design.md#controller-bindings)
   */
  controllerIds: ReadonlySet<string>
}

export interface StaticCallers {
  current: () => CallerSet
  /** re-reads the file now (SIGHUP); true when a new set is in use. Inline callers: false */
  reload: () => boolean
  close: () => void
}

/** how often the file's stat is compared with the last one read */
export const CALLERS_POLL_MS = 2000

export function callerSet (callers: readonly Caller[]): CallerSet {
  return {
    index: indexCallers(callers),
    controllerIds: new Set(callers.filter((c) => c.scopes.includes('control') && c.controllerId !== undefined).map((c) => controllerKey(c.controllerId!)))
  }
}

/** the callers a text holds, or every problem with it (named like the start's) */
export function parseCallers (text: string, variable = 'GATEWAY_CALLERS'): { callers: Caller[] } | { problems: string[] } {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return { problems: [`${variable}: not valid JSON`] }
  }
  const c = CallersSchema.safeParse(json, READABLE)
  return c.success ? { callers: c.data } : { problems: configLines(c.error.issues, variable) }
}

export function fixedCallers (callers: readonly Caller[]): StaticCallers {
  const set = callerSet(callers)
  return { current: () => set, reload: () => false, close: () => {} }
}

export interface CallersFileOptions {
  path: string
  initial: readonly Caller[]
  log: { info: (o: object, m: string) => void; warn: (o: object, m: string) => void }
  pollMs?: number
}

/**
 * Re-read on SIGHUP (reload) and when the file's stat (mtime, size, inode) changes, polled every
 * CALLERS_POLL_MS. A poll rather than fs.watch: a mounted Secret or ConfigMap is replaced by
 * renaming a symlinked directory, which fs.watch on the file misses once its inode is gone, and
 * watch events are unreliable on network filesystems; one stat every two seconds costs nothing.
 */
export function callersFromFile (o: CallersFileOptions): StaticCallers {
  let set = callerSet(o.initial)
  let stamp = fileStamp(o.path)
  const reload = (why: 'signal' | 'change'): boolean => {
    stamp = fileStamp(o.path)
    let parsed: ReturnType<typeof parseCallers>
    try {
      parsed = parseCallers(readFileSync(o.path, 'utf8').replace(/\r?\n$/, ''), 'GATEWAY_CALLERS_FILE')
    } catch {
      parsed = { problems: ['GATEWAY_CALLERS_FILE: cannot read the file it names'] }
    }
    if ('problems' in parsed) {
      o.log.warn({ problems: parsed.problems, trigger: why }, 'GATEWAY_CALLERS_FILE was not reloaded: the callers in use stay')
      return false
    }
    set = callerSet(parsed.callers)
    o.log.info({ callers: parsed.callers.length, trigger: why }, 'GATEWAY_CALLERS_FILE reloaded')
    return true
  }
  const timer = setInterval(() => {
    if (fileStamp(o.path) !== stamp) reload('change')
  }, o.pollMs ?? CALLERS_POLL_MS)
  timer.unref()
  return { current: () => set, reload: () => reload('signal'), close: () => { clearInterval(timer) } }
}
