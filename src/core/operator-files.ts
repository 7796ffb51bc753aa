// Files an operator points at (docs/design.md#operator-files): GATEWAY_CALLERS_FILE,
// GATEWAY_JWT_JWKS_FILE and GATEWAY_CARD_JWKS_FILE, read at start and re-read while the gateway
// serves. Each read is capped at 1 MiB, checked on the open descriptor before a byte is read and
// again by the read itself (never more than the cap and one byte), and a re-read runs off the
// event loop (fs.promises) — a 150 MB callers file once took the process to 3 GiB and stalled
// /healthz for 10 s. A file whose stamp (modification time, size, inode) changed is read once it
// has held still for one poll, so a file being written is not re-read at every poll. A refused
// re-read (too large, unreadable, invalid) keeps the previous contents in force, is logged once
// per version of the file, and counted.
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs'
import { open, stat } from 'node:fs/promises'

/** the most a file an operator points at may hold */
export const OPERATOR_FILE_MAX_BYTES = 1024 * 1024

/** how often each re-read file's stamp is compared with the last one read */
export const OPERATOR_FILE_POLL_MS = 1000

/** the files, by the variable that names them: the metric's `file` label */
export const OPERATOR_FILES = ['GATEWAY_CALLERS_FILE', 'GATEWAY_JWT_JWKS_FILE', 'GATEWAY_CARD_JWKS_FILE'] as const
export type OperatorFile = typeof OPERATOR_FILES[number]

/** why a re-read was refused: the metric's `reason` label */
export const FILE_REFUSALS = ['too_large', 'unreadable', 'invalid'] as const
export type FileRefusal = typeof FILE_REFUSALS[number]

export class FileTooLarge extends Error {
  constructor (readonly size: number) {
    super(`is ${size} bytes or more, over the 1 MiB cap (${OPERATOR_FILE_MAX_BYTES} bytes) for a file the gateway reads`)
    this.name = 'FileTooLarge'
  }
}

class NotAFile extends Error {}

// O_NONBLOCK: opening a FIFO must not wait for a writer (it is then refused as not a file)
const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK

function checked (s: Stats): void {
  if (!s.isFile()) throw new NotAFile()
  if (s.size > OPERATOR_FILE_MAX_BYTES) throw new FileTooLarge(s.size)
}

/** the text of a file of at most 1 MiB, read synchronously: at start only, as part of the configuration */
export function readCappedFileSync (path: string): string {
  const fd = openSync(path, FLAGS)
  try {
    checked(fstatSync(fd))
    // a file that grew since its stat is caught here: one byte over the cap is enough to know
    const buf = Buffer.allocUnsafe(OPERATOR_FILE_MAX_BYTES + 1)
    let n = 0
    for (let r = -1; r !== 0 && n < buf.length; n += r) r = readSync(fd, buf, n, buf.length - n, n)
    if (n > OPERATOR_FILE_MAX_BYTES) throw new FileTooLarge(n)
    return buf.toString('utf8', 0, n)
  } finally {
    closeSync(fd)
  }
}

/** the same, off the event loop */
export async function readCappedFile (path: string): Promise<string> {
  const h = await open(path, FLAGS)
  try {
    checked(await h.stat())
    const buf = Buffer.allocUnsafe(OPERATOR_FILE_MAX_BYTES + 1)
    let n = 0
    for (let r = -1; r !== 0 && n < buf.length; n += r) r = (await h.read(buf, n, buf.length - n, n)).bytesRead
    if (n > OPERATOR_FILE_MAX_BYTES) throw new FileTooLarge(n)
    return buf.toString('utf8', 0, n)
  } finally {
    await h.close()
  }
}

const stampOf = (s: Stats): string => `${s.mtimeMs}:${s.size}:${s.ino}`

export interface WatchedFileOptions<T> {
  variable: OperatorFile
  path: string
  /** what the start read (synchronously, with the same cap) */
  initial: T
  /** the value a text holds, or every problem with it (never a secret) */
  parse: (text: string) => { value: T } | { problems: string[] }
  /** fields of the info line when a new version is in force, e.g. how many callers */
  describe: (value: T) => object
  log: { info: (o: object, m: string) => void; warn: (o: object, m: string) => void }
  /** each refused re-read, for the metric */
  onRefused: (reason: FileRefusal) => void
  pollMs?: number
}

export interface WatchedFile<T> {
  /** the contents in force */
  current: () => T
  /** reads the file now, whatever its stamp (SIGHUP); true when its contents are in force */
  reload: () => Promise<boolean>
  close: () => void
}

/**
 * A file re-read on a poll rather than fs.watch: a mounted Secret or ConfigMap is replaced by
 * renaming a symlinked directory, which fs.watch on the file misses once its inode is gone, and
 * watch events are unreliable on network filesystems; one stat a second costs nothing.
 */
export function watchOperatorFile<T> (o: WatchedFileOptions<T>): WatchedFile<T> {
  let value = o.initial
  // the stamp of the version last read (in force, or refused: logged once, not at every poll);
  // taken at start, right after the configuration read the file
  let read = ((): string => { try { return stampOf(statSync(o.path)) } catch { return 'missing' } })()
  // the stamp the last poll saw
  let seen = read
  // one read at a time, in order: a SIGHUP during a poll's read is served after it
  let queue: Promise<unknown> = Promise.resolve()
  const serial = async <R>(fn: () => Promise<R>): Promise<R> => {
    const run = queue.then(fn)
    queue = run.catch(() => {})
    return await run
  }

  const refuse = (reason: FileRefusal, problems: string[], trigger: string): false => {
    o.log.warn({ file: o.variable, reason, problems, trigger }, `${o.variable} was not reloaded: the previous contents stay in force`)
    o.onRefused(reason)
    return false
  }

  const load = async (stamp: string, trigger: 'signal' | 'change'): Promise<boolean> => {
    read = stamp
    let text: string
    try {
      text = await readCappedFile(o.path)
    } catch (err) {
      if (err instanceof FileTooLarge) return refuse('too_large', [`${o.variable}: ${err.message}`], trigger)
      return refuse('unreadable', [`${o.variable}: ${err instanceof NotAFile ? 'not a regular file' : 'cannot read the file it names'}`], trigger)
    }
    const parsed = o.parse(text)
    if ('problems' in parsed) return refuse('invalid', parsed.problems, trigger)
    value = parsed.value
    o.log.info({ file: o.variable, ...o.describe(value), trigger }, `${o.variable} reloaded`)
    return true
  }

  const statNow = async (): Promise<string> => { try { return stampOf(await stat(o.path)) } catch { return 'missing' } }

  let polling = false
  const timer = setInterval(() => {
    if (polling) return
    polling = true
    void serial(async () => {
      const now = await statNow()
      const before = seen
      seen = now
      // read a changed file once it held still since the last poll
      if (now !== read && now === before) await load(now, 'change')
    }).finally(() => { polling = false })
  }, o.pollMs ?? OPERATOR_FILE_POLL_MS)
  timer.unref()

  return {
    current: () => value,
    reload: async () => await serial(async () => {
      const now = await statNow()
      seen = now
      return await load(now, 'signal')
    }),
    close: () => { clearInterval(timer) }
  }
}
