// The wire profiles: how each remote the simulator plays answers where they differ, in one
// table, so no other file asks which profile it is. 'openoperator' is FastA2A 0.5 as
// OpenOperator runs it (its own card path, Argus reads that bypass the model); 'fasta2a' is
// FastA2A 0.5 as shipped; 'a2a-js' is @a2a-js/sdk 1.3.0's JSON-RPC handler. 'campaign-control'
// is openoperator with the extension served (options.ts). The recorded answers of FastA2A and
// a2a-js are the reference for every entry. Under v1.0 the JSON-RPC layer is the SDK's whatever
// the profile (wire/v1.ts); the profile still shapes the tasks.
import type { WireProfile } from './types.js'

export interface Profile {
  /** Serves /a2a/.well-known/agent-card.json on v0.3 (a v1.0 server always does). */
  agentCardPath: boolean
  /** Serves /a2a/.well-known/agent.json on v0.3 (the v0.2 path; a v1.0 server never does). */
  agentJsonPath: boolean
  /** A request its models refuse: a plain-text 500 (FastA2A's pydantic validation), else a JSON-RPC error. */
  refusesWithPlain500: boolean
  /** Bad JSON: -32700 with this message; null: a plain-text 500 (FastA2A validates the raw bytes with one adapter). */
  invalidJsonMessage: string | null
  taskNotFound: (taskId: string) => string
  /** tasks/cancel of a finished task: the -32002 message; null: the task as stored (FastA2A 0.5's cancel_task has no terminal check). */
  notCancelable: ((taskId: string) => string) | null
  /** v0.3 `configuration.blocking: true` is answered with the finished task (FastA2A ignores it: always `submitted`). */
  honoursBlocking: boolean
  /** tasks/get polls an Argus read's task needs unless `taskSteps` is set (OpenOperator's reads bypass the model). */
  argusTaskSteps: number
  /** Metadata on every task not carrying its own (what the a2a-js interop executor attaches, fixture). */
  taskMetadata: Record<string, unknown> | undefined
  /** A task timestamp from an ISO string: FastA2A serialises Python datetimes (microseconds, no zone). */
  timestamp: (iso: string) => string
  /** tasks/get with historyLength 0 leaves history out (FastA2A treats 0 as no limit). */
  zeroHistoryOmitted: boolean
  /**
   * Where a finished task's result message goes besides its artifact: a2a-js puts it in the status
   * message and the history whatever the end; FastA2A's completed task carries its result in
   * artifacts only (fixture), and any other end puts it in the status message.
   */
  resultMessage: 'status-and-history' | 'status-unless-completed'
}

const FASTA2A_TIMESTAMP = (iso: string): string => iso.replace(/Z$/, '000')

const A2A_JS_METADATA = {
  argus_supervisor: {
    revision: 7,
    stage: 'train',
    run_id: 'run-sdk',
    attempt_id: 'att-1',
    source_sha: 'abc123',
    evidence_revision: 3,
    evidence_ref: 'ev/1',
    blocked: false
  },
  metrics: { loss: 0.1 }
}

const FASTA2A: Profile = {
  agentCardPath: false,
  agentJsonPath: true,
  refusesWithPlain500: true,
  invalidJsonMessage: null,
  taskNotFound: () => 'Task not found',
  notCancelable: null,
  honoursBlocking: false,
  argusTaskSteps: 2,
  taskMetadata: undefined,
  timestamp: FASTA2A_TIMESTAMP,
  zeroHistoryOmitted: false,
  resultMessage: 'status-unless-completed'
}

export const PROFILES: Readonly<Record<WireProfile, Profile>> = {
  openoperator: {
    ...FASTA2A,
    // OpenOperator adds the card path, answers bad JSON and a finished task's cancel itself
    agentCardPath: true,
    invalidJsonMessage: 'Invalid JSON payload',
    notCancelable: () => 'Task not cancelable',
    argusTaskSteps: 0
  },
  fasta2a: FASTA2A,
  'a2a-js': {
    agentCardPath: true,
    agentJsonPath: false,
    refusesWithPlain500: false,
    invalidJsonMessage: 'Invalid JSON payload.',
    taskNotFound: (taskId) => `Task not found: ${taskId}`,
    notCancelable: (taskId) => `Task not cancelable: ${taskId}`,
    honoursBlocking: true,
    argusTaskSteps: 2,
    taskMetadata: A2A_JS_METADATA,
    timestamp: (iso) => iso,
    zeroHistoryOmitted: true,
    resultMessage: 'status-and-history'
  }
}
