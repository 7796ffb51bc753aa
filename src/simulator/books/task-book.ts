// The task book: in-memory A2A tasks and their scripted lifecycles. A created task walks its
// plan's states one step per tasks/get (that poll is what moves a FastA2A worker along, as far
// as a client can see) and receives its result content when it reaches the plan's last state;
// `complete` ends one on time instead (a campaign-control submission,
// docs/design.md#simulator-faults). What the profile shapes (timestamps, history, where the
// result goes) it reads from the profile's entry in ../profiles.ts.
import { randomUUID } from 'node:crypto'
import type { Profile } from '../profiles.js'
import { TERMINAL_STATES, internalState, stateOf } from './task-states.js'

export type Task = Record<string, unknown>
export type Payload = Record<string, unknown>

export interface TaskPlan {
  /** The states walked, first one at creation; the task stays in the last one. */
  states: string[]
  /** Attached (artifact, and status message where the profile does) on reaching the last state. */
  finalPayload?: Payload
}

export interface NewTask {
  message: Record<string, unknown>
  plan: TaskPlan
  metadata?: Record<string, unknown>
}

export type CancelResult = { kind: 'not-found' } | { kind: 'terminal'; task: Task } | { kind: 'canceled'; task: Task }

interface Progress {
  plan: TaskPlan
  step: number
}

export class TaskBook {
  private readonly tasks = new Map<string, Task>()
  private readonly progress = new Map<string, Progress>()

  constructor (private readonly profile: Profile) {}

  add (task: Task): void {
    if (typeof task.id !== 'string' || task.id === '') throw new TypeError('a task needs a string id')
    this.tasks.set(task.id, structuredClone(task))
    this.progress.delete(task.id)
  }

  get (id: string): Task | undefined {
    const task = this.tasks.get(id)
    return task === undefined ? undefined : structuredClone(task)
  }

  create (input: NewTask): Task {
    if (input.plan.states.length === 0) throw new TypeError('a task plan needs at least one state')
    // a plan may name v1.0 states; the book keeps v0.3 names (translated at the wire)
    const plan = { ...input.plan, states: input.plan.states.map(internalState) }
    const id = randomUUID()
    const contextId = typeof input.message.contextId === 'string' ? input.message.contextId : randomUUID()
    const task: Task = {
      id,
      contextId,
      kind: 'task',
      status: { state: plan.states[0], timestamp: this.timestamp() },
      history: [{ ...input.message, contextId, taskId: id }]
    }
    if (input.metadata !== undefined) task.metadata = input.metadata
    this.tasks.set(id, task)
    this.progress.set(id, { plan, step: 0 })
    if (plan.states.length === 1) this.finish(task, plan)
    return structuredClone(task)
  }

  /** One poll's worth of progress; tasks without a plan (added ones) never move. */
  advance (id: string): void {
    const task = this.tasks.get(id)
    const progress = this.progress.get(id)
    if (task === undefined || progress === undefined) return
    const last = progress.plan.states.length - 1
    if (progress.step >= last) return
    progress.step += 1
    task.status = { state: progress.plan.states[progress.step], timestamp: this.timestamp() }
    if (progress.step === last) this.finish(task, progress.plan)
  }

  /** The task as tasks/get shows it: a2a-js omits history for historyLength 0, FastA2A treats 0 as no limit. */
  view (id: string, historyLength?: number): Task | undefined {
    const task = this.get(id)
    if (task === undefined) return undefined
    if (historyLength === 0 && this.profile.zeroHistoryOmitted) delete task.history
    else if (historyLength !== undefined && historyLength > 0 && Array.isArray(task.history)) {
      task.history = task.history.slice(-historyLength)
    }
    return task
  }

  /** Ends a task not yet final as `completed` with `payload` as its result (a worker finishing on its own); false when there is none or it is final. */
  complete (id: string, payload: Payload): boolean {
    const task = this.tasks.get(id)
    if (task === undefined || TERMINAL_STATES.has(stateOf(task))) return false
    this.progress.delete(id)
    task.status = { state: 'completed', timestamp: this.timestamp() }
    this.finish(task, { states: ['completed'], finalPayload: payload })
    return true
  }

  cancel (id: string): CancelResult {
    const task = this.tasks.get(id)
    if (task === undefined) return { kind: 'not-found' }
    if (TERMINAL_STATES.has(stateOf(task))) return { kind: 'terminal', task: structuredClone(task) }
    this.progress.delete(id)
    task.status = { state: 'canceled', timestamp: this.timestamp() }
    return { kind: 'canceled', task: structuredClone(task) }
  }

  private finish (task: Task, plan: TaskPlan): void {
    if (plan.finalPayload === undefined) return
    const parts = [{ kind: 'data', data: plan.finalPayload }]
    task.artifacts = [{ artifactId: randomUUID(), name: 'result', parts }]
    // clients look for a reason in the status message; FastA2A's completed task has none
    const everywhere = this.profile.resultMessage === 'status-and-history'
    if (!everywhere && stateOf(task) === 'completed') return
    const reply = { kind: 'message', messageId: randomUUID(), role: 'agent', parts, contextId: task.contextId, taskId: task.id, metadata: {} }
    task.status = { ...(task.status as object), message: reply }
    if (everywhere && Array.isArray(task.history)) task.history.push(reply)
  }

  private timestamp (): string {
    return this.profile.timestamp(new Date().toISOString())
  }
}
