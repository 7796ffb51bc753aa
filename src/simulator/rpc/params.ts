// What both wires and the campaign-control extension say about params they refuse: a short,
// value-free description of a validation problem, and the A2A wire's camelCase rule (a
// snake_case key in a protocol object is refused, so a client that leaks one fails loudly).
import type { z } from 'zod'

/**
 * Dotted paths of snake_case keys in the protocol objects of params. Metadata and data
 * values are the extensions' own business (the campaign-control extension is snake_case),
 * so they are not looked into.
 */
export function snakeCaseKeys (params: unknown): string[] {
  const found: string[] = []
  const visit = (value: unknown, path: string): void => {
    if (!isObject(value)) return
    for (const key of Object.keys(value)) {
      if (key.includes('_')) found.push(path === '' ? key : `${path}.${key}`)
    }
  }
  visit(params, '')
  if (!isObject(params)) return found
  visit(params.configuration, 'configuration')
  const message = params.message
  visit(message, 'message')
  if (isObject(message) && Array.isArray(message.parts)) {
    message.parts.forEach((part, i) => {
      visit(part, `message.parts.${i}`)
      if (isObject(part)) visit(part.file, `message.parts.${i}.file`)
    })
  }
  return found
}

/** A short, value-free description of the first validation problem. */
export function describeIssue (error: z.ZodError): string {
  const issue = error.issues[0]
  const path = issue === undefined || issue.path.length === 0 ? 'params' : issue.path.map(String).join('.')
  return `${path} is missing or invalid`
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
