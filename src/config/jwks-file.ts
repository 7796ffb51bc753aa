// A key set named by a *_FILE variable, read at start (docs/design.md#operator-files): the card
// signers' (GATEWAY_CARD_JWKS_FILE) and the identity provider's (GATEWAY_JWT_JWKS_FILE), each
// under the cap its re-read keeps, each refusal named by its variable.
import type { JSONWebKeySet } from 'jose'
import { FileTooLarge } from '../core/operator-files.js'
import { fileProblem } from '../core/env-files.js'
import { parseJwks } from '../core/trusted-keys.js'

export function jwksFile (variable: string, path: string, read: (p: string) => string, problems: string[]): JSONWebKeySet | undefined {
  let text: string | undefined
  try {
    text = read(path)
  } catch (err) {
    problems.push(err instanceof FileTooLarge ? fileProblem(variable, err) : `${variable}: cannot be read`)
  }
  if (text === undefined) return undefined
  const parsed = parseJwks(text)
  if ('jwks' in parsed) return parsed.jwks
  for (const p of parsed.problems) problems.push(`${variable}: ${p}`)
  return undefined
}
