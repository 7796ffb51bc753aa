// A finished campaign task every simulator starts with, so task projection can be tested
// without driving a submission first. It carries everything a projection must drop (history,
// metrics, stdout) or keep inert (a file artifact whose URL points back at the simulator, so
// a test can prove nobody fetched it).
import type { Profile } from '../profiles.js'
import type { Task } from './task-book.js'

export const DEMO_TASK_ID = 'task-demo-1'
export const DEMO_FILE_PATH = '/artifacts/task-demo-1/report.json'

export function demoTask (origin: string, profile: Profile, sourceSha: string): Task {
  const contextId = 'ctx-demo-1'
  const message = (messageId: string, role: string, text: string): Record<string, unknown> => ({
    kind: 'message',
    messageId,
    role,
    parts: [{ kind: 'text', text }],
    contextId,
    taskId: DEMO_TASK_ID
  })
  return {
    id: DEMO_TASK_ID,
    contextId,
    kind: 'task',
    status: { state: 'completed', timestamp: profile.timestamp('2026-11-29T12:00:05.000Z') },
    history: [
      message('demo-msg-1', 'user', 'Run the evaluation stage for camp-1.'),
      message('demo-msg-2', 'agent', 'Evaluation started on the remote runner.'),
      message('demo-msg-3', 'agent', 'Evaluation finished; report attached.')
    ],
    artifacts: [
      {
        artifactId: 'artifact-demo-result',
        name: 'result',
        parts: [{ kind: 'data', data: { stage: 'eval', score: 0.91, passed: true } }]
      },
      {
        artifactId: 'artifact-demo-report',
        name: 'report',
        parts: [{ kind: 'file', file: { name: 'report.json', mimeType: 'application/json', uri: `${origin}${DEMO_FILE_PATH}` } }]
      }
    ],
    metadata: {
      argus_supervisor: {
        revision: 4,
        stage: 'eval',
        run_id: 'run-demo-1',
        attempt_id: 'att-2',
        source_sha: sourceSha,
        evidence_revision: 2,
        evidence_ref: 'ev/demo-1',
        blocked: false
      },
      metrics: { loss: 0.12, accuracy: 0.91 },
      stdout: 'epoch 1/1: loss 0.12\nevaluation: accuracy 0.91\n'
    }
  }
}
