// The SQLite ledger's controller bindings (docs/design.md#controller-bindings): each controller
// id, in any letter case, held by one caller identity; and the live leases that keep a binding.
import { bindState } from '../bind-state.js'
import { controllerKey, toBinding } from '../rows.js'
import type { BindingStore, ControllerBinding } from '../types.js'
import type { SqliteState } from './state.js'

async function bindController (st: SqliteState, b: ControllerBinding): Promise<ControllerBinding> {
  const key = controllerKey(b.controllerId)
  // every mutation binds its controller id and nearly always finds it bound: a read then, outside
  // the group commit, which runs each batch inside one synchronous transaction, so a read here sees
  // only what is committed (docs/design.md#group-commit); the write waited for a commit every time
  const found = st.s.binding.get(key)
  if (found !== undefined) return toBinding(found)
  const row = { key, ...b }
  return toBinding(await st.write(() => {
    st.s.bind.run(row)
    return st.s.binding.get(key)!
  }))
}

async function listControllerBindings (st: SqliteState): Promise<ControllerBinding[]> {
  return st.s.bindings.all().map(toBinding)
}

async function removeControllerBinding (st: SqliteState, controllerId: string): Promise<ControllerBinding | undefined> {
  const row = await st.write(() => st.s.unbind.get(controllerKey(controllerId)))
  return row === undefined ? undefined : toBinding(row)
}

async function liveLeasesOf (st: SqliteState, controllerId: string, nowMs: number): Promise<string[]> {
  return st.s.liveLeasesOf.all(controllerKey(controllerId), nowMs).map((r) => r.campaign_id)
}

export const bindingStore = (st: SqliteState): BindingStore => bindState(st, { bindController, listControllerBindings, removeControllerBinding, liveLeasesOf })
