// Record builders for the ledger tests (docs/design.md#ledger), kept apart from the vitest
// suite so a spawned child process can use them too.
import { randomBytes } from 'node:crypto'
import type { InsertResult, Ledger, NewMutationRecord, Outcome } from '../../src/ledger/types.js'

let seq = 0
export const newId = (prefix = 'req'): string => `${prefix}-${++seq}-${randomBytes(6).toString('hex')}`

export function pendingRecord (o: Partial<NewMutationRecord> = {}): NewMutationRecord {
  return {
    requestId: newId(),
    campaignId: 'camp-1',
    caller: 'alice',
    identity: 'static:alice',
    operation: 'intervene',
    paramsHash: 'a'.repeat(64),
    params: { intervention: { kind: 'pause', note: 'ünïcode ✓', values: [1, 2.5, null, true] } },
    controllerEpoch: 3,
    owner: 'instance-a',
    waitMs: 60_000,
    createdAt: 1_000,
    ...o
  }
}

/** a pending insert as the pipeline makes it: the campaign's ticket, then the insert against it */
export async function insert (ledger: Ledger, r: NewMutationRecord, o: { fence?: boolean } = {}): Promise<InsertResult> {
  return await ledger.insertPending(r, await ledger.ticket(r.campaignId), o)
}

export const appliedOutcome = (at = 2_000, taskId: string | null = null): Outcome => ({
  state: 'applied', answer: { httpStatus: 200, body: { accepted: true, nested: { list: [1, 'two'] } } }, outcomeCode: null, taskId, at
})
