// The resolve hook of test/helpers/module-log.mjs: appends each resolved ES module's URL to the file.
import { appendFileSync } from 'node:fs'

let file

export function initialize (data) { file = data.file }

export async function resolve (specifier, context, next) {
  const r = await next(specifier, context)
  appendFileSync(file, `${r.url}\n`)
  return r
}
