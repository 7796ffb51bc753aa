// A value given inline or through a mounted file (`X` or `X_FILE`, docs/design.md#configuration),
// read the same way by the gateway's configuration and the qualification command: never both,
// one trailing newline dropped, an unreadable file named by its variable, never its content.
import { FileTooLarge } from './operator-files.js'

export type ReadFile = (path: string) => string

export function readSecretFile (file: string, variable: string, problems: string[], read: ReadFile): string | undefined {
  try {
    return read(file).replace(/\r?\n$/, '')
  } catch (err) {
    problems.push(fileProblem(variable, err))
    return undefined
  }
}

/** why a file could not be used: over the cap (src/core/operator-files.ts), else unreadable */
export function fileProblem (variable: string, err: unknown): string {
  return err instanceof FileTooLarge ? `${variable}: ${err.message}` : `${variable}: cannot read the file it names`
}

/** the inline value, else the named file's content; undefined (and a problem) when both are set */
export function inlineOrFile (env: Record<string, string | undefined>, inline: string, file: string, problems: string[], read: ReadFile): string | undefined {
  const a = env[inline]
  const b = env[file]
  if (a !== undefined && a !== '' && b !== undefined && b !== '') {
    problems.push(`${inline} and ${file} are both set; set one`)
    return undefined
  }
  if (a !== undefined && a !== '') return a
  if (b !== undefined && b !== '') return readSecretFile(b, file, problems, read)
  return undefined
}
