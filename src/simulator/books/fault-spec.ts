// The fault rules a person writes without code (docs/design.md#simulator-faults): the syntax of
// SIMULATOR_FAULTS and of the admin route's body, `<kind>[=<value>]@<target>[:<times>]`, comma
// separated, e.g. `drop-after-apply@submit:1,delay=500ms@tasks/get`. Parsing never throws: every
// bad rule is a problem naming it, so a start or a POST can refuse with all of them at once.
import type { ControlOperation, Fault, FaultRule, FaultTarget } from '../types.js'

/** Campaign-control operations by logical name; 'submit' is a message/send carrying argus_supervisor metadata. */
export const FAULT_OPERATIONS: ReadonlyArray<ControlOperation | 'submit'> = [
  'submit', 'claim_control', 'read_control', 'renew_control', 'release_control', 'intervene', 'request_status', 'cancel'
]
const ARGUS_OPERATIONS = ['supervisor.health', 'supervisor.status', 'campaign.list']
/** HTTP routes other than POST /a2a/; 'card' is both card paths. */
const ROUTE_TARGETS = ['card', 'agent-card', 'agent-json', 'health'] as const
/** A2A v1.0 methods have no slash; every v0.3 and extension method has one. */
const V1_METHODS = ['SendMessage', 'GetTask', 'CancelTask']

const MAX_RULES = 32
const MAX_TEXT = 4096
const MAX_DELAY_MS = 600_000
const MiB = 1024 * 1024

type On = 'rpc' | 'route' | 'any'

interface KindSpec {
  on: On
  /** what the value is, for messages; undefined: the kind takes none */
  value?: string
  build: (value: string | undefined) => Fault | string
}

const KINDS: Record<string, KindSpec> = {
  // on POST /a2a/ the call is handled first: the ambiguous write a client must survive
  'drop-after-apply': { on: 'rpc', build: () => ({ kind: 'drop' }) },
  drop: { on: 'route', build: () => ({ kind: 'drop' }) },
  delay: { on: 'any', value: 'a duration such as 500ms or 2s, at most 600s', build: (v) => delay(v) },
  hold: { on: 'rpc', build: () => ({ kind: 'hold' }) },
  status: { on: 'any', value: 'an HTTP status from 400 to 599 (default 503)', build: (v) => status(v) },
  'rpc-error': { on: 'rpc', value: 'a JSON-RPC error code such as -32603 (the default)', build: (v) => rpcError(v) },
  'method-not-found': { on: 'rpc', build: () => ({ kind: 'rpc-error', code: -32601, message: 'Method not found' }) },
  'wrong-id': { on: 'rpc', build: () => ({ kind: 'wrong-id' }) },
  'invalid-json': { on: 'any', build: () => ({ kind: 'invalid-json' }) },
  redirect: { on: 'any', value: 'a path such as /moved (the default)', build: (v) => redirect(v) },
  oversized: { on: 'any', value: 'a size such as 2MiB, 512KiB or 100000 (default 17MiB, past every default cap of the gateway)', build: (v) => oversized(v) }
}

export const FAULT_KINDS: readonly string[] = Object.keys(KINDS)

export type ParsedFaults = { ok: true; rules: FaultRule[] } | { ok: false; problems: string[] }

export interface ParseContext {
  /** whether the simulator serves campaign control: the operation targets need it */
  campaignControl: boolean
}

const RULE = /^([^=@]+)(?:=([^@]*))?@([^:@]+)(?::([^:@]*))?$/

/** Parses a comma-separated list of rules (blank: none). Problems name the rule they are about. */
export function parseFaultRules (text: string, ctx: ParseContext): ParsedFaults {
  if (text.length > MAX_TEXT) return { ok: false, problems: [`at most ${MAX_TEXT} characters`] }
  if (text.trim() === '') return { ok: true, rules: [] }
  const pieces = text.split(',').map((p) => p.trim())
  if (pieces.length > MAX_RULES) return { ok: false, problems: [`at most ${MAX_RULES} rules`] }
  const rules: FaultRule[] = []
  const problems: string[] = []
  pieces.forEach((piece, i) => {
    const rule = parseRule(piece, ctx)
    if (typeof rule === 'string') problems.push(piece === '' ? `rule ${i + 1} is empty` : `"${shown(piece)}": ${rule}`)
    else rules.push(rule)
  })
  return problems.length > 0 ? { ok: false, problems } : { ok: true, rules }
}

function parseRule (piece: string, ctx: ParseContext): FaultRule | string {
  if (piece === '') return 'empty'
  const m = RULE.exec(piece)
  if (m === null) return 'expected <kind>[=<value>]@<target>[:<times>], e.g. drop-after-apply@submit:1'
  const [, kindName, value, targetName, timesText] = m as unknown as [string, string, string | undefined, string, string | undefined]
  const kind = Object.hasOwn(KINDS, kindName) ? KINDS[kindName]! : undefined
  if (kind === undefined) return `unknown fault "${shown(kindName)}" (one of ${FAULT_KINDS.join(', ')})`
  if (value !== undefined && kind.value === undefined) return `${kindName} takes no value`
  const fault = kind.build(value)
  if (typeof fault === 'string') return fault
  const parsedTarget = parseTarget(targetName)
  if (typeof parsedTarget === 'string') return parsedTarget
  const { target } = parsedTarget
  const on = isRpcTarget(target) ? 'rpc' : 'route'
  if (kind.on !== 'any' && kind.on !== on) {
    if (kindName === 'drop') return `drop applies to the HTTP routes (${ROUTE_TARGETS.join(', ')}); on a JSON-RPC call the call is applied first: write drop-after-apply`
    if (kindName === 'drop-after-apply') return `drop-after-apply applies to JSON-RPC calls; for ${targetName} write drop`
    return `${kindName} applies to JSON-RPC calls, not to ${targetName}`
  }
  if (typeof target === 'object' && 'operation' in target && !ctx.campaignControl) {
    return `${targetName} is a campaign-control operation, and this simulator does not serve campaign control (SIMULATOR_PROFILE=campaign-control)`
  }
  let times: number | undefined
  if (timesText !== undefined) {
    if (!/^[1-9][0-9]{0,5}$/.test(timesText)) return `times must be a whole number from 1 to 999999, not "${shown(timesText)}"`
    times = Number(timesText)
  }
  return { target, fault, ...(times === undefined ? {} : { times }), text: piece }
}

/** The target a name means, or the problem (a string). */
function parseTarget (name: string): { target: FaultTarget } | string {
  if ((FAULT_OPERATIONS as readonly string[]).includes(name)) return { target: { operation: name as ControlOperation | 'submit' } }
  if (ARGUS_OPERATIONS.includes(name)) return { target: { argusOperation: name } }
  if ((ROUTE_TARGETS as readonly string[]).includes(name) || name === 'rpc') return { target: name as FaultTarget }
  if (/^[A-Za-z][A-Za-z0-9_.-]*\/[A-Za-z0-9_./-]+$/.test(name) || V1_METHODS.includes(name)) return { target: { rpcMethod: name } }
  return `unknown target "${shown(name)}": a campaign-control operation (${FAULT_OPERATIONS.join(', ')}), an Argus read (${ARGUS_OPERATIONS.join(', ')}), ` +
    `a JSON-RPC method (e.g. tasks/get, message/send, ${V1_METHODS.join(', ')}), rpc (every JSON-RPC call) or a route (${ROUTE_TARGETS.join(', ')})`
}

function isRpcTarget (target: FaultTarget): boolean {
  return target === 'rpc' || (typeof target === 'object' && ('operation' in target || 'argusOperation' in target || 'rpcMethod' in target))
}

function delay (v: string | undefined): Fault | string {
  const m = v === undefined ? null : /^([0-9]{1,9})(ms|s)$/.exec(v)
  if (m === null) return `delay needs a duration such as 500ms or 2s${v === undefined ? '' : `, not "${shown(v)}"`}`
  const ms = Number(m[1]) * (m[2] === 's' ? 1000 : 1)
  if (ms < 1 || ms > MAX_DELAY_MS) return `delay must be from 1ms to ${MAX_DELAY_MS / 1000}s`
  return { kind: 'delay', ms }
}

function status (v: string | undefined): Fault | string {
  if (v === undefined) return { kind: 'status', status: 503 }
  if (!/^[45][0-9]{2}$/.test(v)) return `status must be from 400 to 599, not "${shown(v)}"`
  return { kind: 'status', status: Number(v) }
}

function rpcError (v: string | undefined): Fault | string {
  if (v === undefined) return { kind: 'rpc-error', code: -32603, message: 'Internal error' }
  if (!/^-?[0-9]{1,10}$/.test(v) || Math.abs(Number(v)) > 2 ** 31) return `rpc-error needs a whole number code such as -32603, not "${shown(v)}"`
  return { kind: 'rpc-error', code: Number(v), message: 'Simulated error' }
}

function redirect (v: string | undefined): Fault | string {
  if (v === undefined) return { kind: 'redirect', location: '/moved' }
  if (!/^\/[A-Za-z0-9._~/-]{0,255}$/.test(v)) return `redirect needs a path such as /moved, not "${shown(v)}"`
  return { kind: 'redirect', location: v }
}

function oversized (v: string | undefined): Fault | string {
  if (v === undefined) return { kind: 'oversized', bytes: 17 * MiB, mode: 'chunked' }
  const m = /^([0-9]{1,9})(KiB|MiB)?$/.exec(v)
  const bytes = m === null ? NaN : Number(m[1]) * (m[2] === 'MiB' ? MiB : m[2] === 'KiB' ? 1024 : 1)
  if (!(bytes >= 1 && bytes <= 64 * MiB)) return `oversized needs a size from 1 byte to 64MiB, such as 2MiB, not "${shown(v)}"`
  return { kind: 'oversized', bytes, mode: 'chunked' }
}

/** A fault injected through the API, written in the rule syntax where it has one (else its kind). */
export function formatFaultRule (target: FaultTarget, fault: Fault): string {
  const on = typeof target === 'string' ? target : 'operation' in target ? target.operation : 'argusOperation' in target ? target.argusOperation : 'rpcMethod' in target ? target.rpcMethod : `wrong-route ${target.wrongRoute}`
  const rpc = isRpcTarget(target)
  switch (fault.kind) {
    case 'drop': return `${rpc ? 'drop-after-apply' : 'drop'}@${on}`
    case 'delay': return `delay=${fault.ms}ms@${on}`
    case 'status': return `status=${fault.status}@${on}`
    case 'rpc-error': return fault.code === -32601 ? `method-not-found@${on}` : `rpc-error=${fault.code}@${on}`
    case 'redirect': return `redirect=${fault.location}@${on}`
    case 'oversized': return `oversized=${fault.bytes}@${on}`
    default: return `${fault.kind}@${on}`
  }
}

export type TaskSeconds = { ok: true; ms: number | undefined } | { ok: false; problem: string }

/** SIMULATOR_TASK_SECONDS: seconds from submission to `completed`; `0` or `off`: never (undefined). */
export function parseTaskSeconds (text: string): TaskSeconds {
  const v = text.trim()
  if (v === 'off' || /^0+(\.0+)?$/.test(v)) return { ok: true, ms: undefined }
  const seconds = /^[0-9]{1,5}(\.[0-9]{1,3})?$/.test(v) ? Number(v) : NaN
  if (!(seconds > 0 && seconds <= 86_400)) return { ok: false, problem: 'must be a number of seconds from 0.001 to 86400 (e.g. 5 or 0.5), or 0 or off to leave submitted tasks working' }
  return { ok: true, ms: Math.round(seconds * 1000) }
}

/** a piece of the input, fit to quote in one line */
function shown (text: string): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?')
  return clean.length > 64 ? `${clean.slice(0, 64)}…` : clean
}
