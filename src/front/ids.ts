// The ids a front-door request carries, checked by the REST interface's own schemas
// (docs/design.md#front-door): a campaign id REST would refuse as a path parameter, or a request
// or message id it would refuse as a request id, is -32602 `invalid_request` naming the front
// door's field — before anything is written or sent, so that nothing the door accepts is a
// campaign or a record REST cannot reach (reconcile, acknowledge, the request routes).
import type { z } from 'zod'
import { CampaignIdSchema, RequestIdSchema } from '../../schemas/control.js'
import { invalidRequest, parseReadable } from '../core/validation.js'
import { invalidField } from './errors.js'

function checked (schema: z.ZodType<string>, value: unknown, path: readonly string[]): string {
  const r = parseReadable(schema, value)
  if (r.success) return r.data
  throw invalidField(path.join('.'), invalidRequest(r.issues.map((i) => ({ ...i, path: [...path, ...i.path] }))).message)
}

/** a campaign id as REST's routes take it, or -32602 naming `path` (`params.campaign_id`) */
export const campaignIdIn = (value: unknown, ...path: string[]): string => checked(CampaignIdSchema, value, path)

/** a request id (a front-door message id is one) as REST takes it, or -32602 naming `path` */
export const requestIdIn = (value: unknown, ...path: string[]): string => checked(RequestIdSchema, value, path)
