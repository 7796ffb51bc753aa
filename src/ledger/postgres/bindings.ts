// The PostgreSQL ledger's controller bindings (docs/design.md#controller-bindings): each controller
// id, in any letter case, held by one caller identity; and the live leases that keep a binding.
import { bindState } from '../bind-state.js'
import { controllerKey, toBinding, type BindingRow } from '../rows.js'
import type { BindingStore, ControllerBinding } from '../types.js'
import { one, q, type PgState } from './session.js'

/**
 * One statement: the binding in force, or the one made now — or, when another replica made one
 * meanwhile, that one (a no-op update returns it), so a DELETE between an insert and a read cannot
 * leave nothing to answer with. Every mutation binds its controller id, and nearly always finds it
 * bound: a read then, with nothing to commit (the upsert wrote a row version and flushed the WAL
 * on every mutation).
 */
const BIND_CONTROLLER = `WITH found AS (
    SELECT controller_id, identity, caller, bound_at FROM controller_bindings WHERE controller_key = $1
  ), made AS (
    INSERT INTO controller_bindings (controller_key, controller_id, identity, caller, bound_at)
    SELECT $1, $2, $3, $4, $5::bigint WHERE NOT EXISTS (SELECT 1 FROM found)
    ON CONFLICT (controller_key) DO UPDATE SET controller_key = controller_bindings.controller_key
    RETURNING controller_id, identity, caller, bound_at
  )
  SELECT controller_id, identity, caller, bound_at FROM found UNION ALL SELECT controller_id, identity, caller, bound_at FROM made`

async function bindController (st: PgState, b: ControllerBinding): Promise<ControllerBinding> {
  return toBinding((await one<BindingRow>(st, BIND_CONTROLLER, [controllerKey(b.controllerId), b.controllerId, b.identity, b.caller, b.boundAt]))!)
}

async function listControllerBindings (st: PgState): Promise<ControllerBinding[]> {
  return (await q<BindingRow>(st, 'SELECT controller_id, identity, caller, bound_at FROM controller_bindings ORDER BY controller_key COLLATE "C"')).rows.map(toBinding)
}

async function removeControllerBinding (st: PgState, controllerId: string): Promise<ControllerBinding | undefined> {
  const row = await one<BindingRow>(st, 'DELETE FROM controller_bindings WHERE controller_key = $1 RETURNING controller_id, identity, caller, bound_at', [controllerKey(controllerId)])
  return row === undefined ? undefined : toBinding(row)
}

// ASCII case folding, as SQLite's lower(); the ids are compared, and sorted, byte for byte
async function liveLeasesOf (st: PgState, controllerId: string, nowMs: number): Promise<string[]> {
  return (await q<{ campaign_id: string }>(st, `SELECT campaign_id FROM campaign_leases
    WHERE lower(controller_id COLLATE "C") = $1 AND expires_at * 1000 > $2::float8 ORDER BY campaign_id COLLATE "C"`,
  [controllerKey(controllerId), nowMs])).rows.map((r) => r.campaign_id)
}

export const bindingStore = (st: PgState): BindingStore => bindState(st, { bindController, listControllerBindings, removeControllerBinding, liveLeasesOf })
