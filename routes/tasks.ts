// GET /v1/tasks/:taskId (CONTRACT §7): filled in by the task projection.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'

const tasks: FastifyPluginAsyncZod = async () => {}

export default tasks
