// The SQLite ledger's front-door sends (docs/design.md#front-door): one per (caller identity,
// message id), the owner of the task a submission created.
import { bindState } from '../bind-state.js'
import { toFrontSend, toJson } from '../rows.js'
import type { FrontSend, FrontSendStore } from '../types.js'
import type { SqliteState } from './state.js'

async function getFrontSend (st: SqliteState, identity: string, messageId: string): Promise<FrontSend | undefined> {
  const row = st.s.frontSend.get(identity, messageId)
  return row === undefined ? undefined : toFrontSend(row)
}

async function putFrontSend (st: SqliteState, f: FrontSend): Promise<FrontSend> {
  const row = { ...f, answer: f.answer === null || f.answer === undefined ? null : toJson(f.answer) }
  return toFrontSend(await st.write(() => {
    st.s.putFrontSend.run(row)
    return st.s.frontSend.get(f.identity, f.messageId)!
  }))
}

async function settleFrontSend (st: SqliteState, identity: string, messageId: string, r: { taskId?: string; answer?: unknown }): Promise<void> {
  const row = { identity, messageId, taskId: r.taskId ?? null, answer: r.answer === undefined ? null : toJson(r.answer) }
  await st.write(() => st.s.settleFrontSend.run(row))
}

async function frontTaskOf (st: SqliteState, identity: string, taskId: string): Promise<FrontSend | undefined> {
  const row = st.s.frontTaskOf.get(taskId, identity)
  return row === undefined ? undefined : toFrontSend(row)
}

export const frontSendStore = (st: SqliteState): FrontSendStore => bindState(st, { getFrontSend, putFrontSend, settleFrontSend, frontTaskOf })
