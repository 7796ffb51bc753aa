// The mutation pipeline (docs/design.md#order-of-checks): one ordered list of steps, the
// first that fails answers. Authentication, scopes and the body cap come before it (the
// HTTP layer); from the body rules on, every step is here and runs without Fastify.
// A mutation is committed `pending` before it leaves, sent once through the mutation
// dispatcher (no retry, a fresh connection), and its outcome written compare-and-set.
//
// The pipeline holds no state of its own: it is its dependencies (pipeline-types.ts) and one run
// of a mutation over them (pipeline-run.ts), built from the steps (pipeline-steps.ts) and ended
// by its outcome (pipeline-settle.ts).
import { runMutation } from './pipeline-run.js'
import type { MutationAnswer, MutationRequest, PipelineDeps } from './pipeline-types.js'

export type { MutationAnswer, MutationMetric, MutationRequest, MutationStep, PipelineDeps } from './pipeline-types.js'
export { CONTROL_OPERATION } from './pipeline-types.js'
export { ambiguityBlock, cancelTarget, isUnsent, ownerWaitMs, parseBody, priorUse, prunedAnswer, requireCapability } from './pipeline-steps.js'

export function createPipeline (d: PipelineDeps): (req: MutationRequest) => Promise<MutationAnswer> {
  return async (req) => await runMutation(d, req)
}
