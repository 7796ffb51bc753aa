// The PostgreSQL ledger's front-door sends (docs/design.md#front-door): one per (caller identity,
// message id), shared by every replica, the owner of the task a submission created.
import { bindState } from '../bind-state.js'
import { FRONT_SEND_COLUMNS, toFrontSend, toJson, type FrontSendRow } from '../rows.js'
import type { FrontSend, FrontSendStore } from '../types.js'
import { one, q, type PgState } from './session.js'

async function getFrontSend (st: PgState, identity: string, messageId: string): Promise<FrontSend | undefined> {
  const row = await one<FrontSendRow>(st, `SELECT ${FRONT_SEND_COLUMNS} FROM front_sends WHERE identity = $1 AND message_id = $2`, [identity, messageId])
  return row === undefined ? undefined : toFrontSend(row)
}

// one statement: the send inserted now, or the one in force (a no-op update returns it)
async function putFrontSend (st: PgState, f: FrontSend): Promise<FrontSend> {
  return toFrontSend((await one<FrontSendRow>(st, `INSERT INTO front_sends (${FRONT_SEND_COLUMNS})
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (identity, message_id) DO UPDATE SET identity = front_sends.identity
    RETURNING ${FRONT_SEND_COLUMNS}`, [f.identity, f.messageId, f.caller, f.contentHash, f.kind, f.campaignId, f.taskId,
    f.answer === null || f.answer === undefined ? null : toJson(f.answer), f.createdAt]))!)
}

async function settleFrontSend (st: PgState, identity: string, messageId: string, r: { taskId?: string; answer?: unknown }): Promise<void> {
  await q(st, `UPDATE front_sends SET task_id = coalesce($3, task_id), answer = coalesce($4, answer)
    WHERE identity = $1 AND message_id = $2`, [identity, messageId, r.taskId ?? null, r.answer === undefined ? null : toJson(r.answer)])
}

async function frontTaskOf (st: PgState, identity: string, taskId: string): Promise<FrontSend | undefined> {
  const row = await one<FrontSendRow>(st, `SELECT ${FRONT_SEND_COLUMNS} FROM front_sends
    WHERE task_id = $1 AND identity = $2 ORDER BY created_at LIMIT 1`, [taskId, identity])
  return row === undefined ? undefined : toFrontSend(row)
}

export const frontSendStore = (st: PgState): FrontSendStore => bindState(st, { getFrontSend, putFrontSend, settleFrontSend, frontTaskOf })
