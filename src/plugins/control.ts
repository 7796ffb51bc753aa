// The campaign control plane as `app.control` (docs/design.md#campaign-control): its plain
// factory wired to the ledger, the upstream client and discovery; at ready it turns the
// pending records nobody can still be waiting for ambiguous, then sweeps overdue ones.
import { randomUUID } from 'node:crypto'
import fp from 'fastify-plugin'
import type { Logger } from 'pino'
import { createControlPlane, type ControlPlane } from '../control/plane.js'
import type { MutationStep } from '../control/pipeline.js'

declare module 'fastify' {
  interface FastifyInstance { control: ControlPlane }
}

export default fp(async (app, opts: { now?: (() => number) | undefined; monotonic?: (() => number) | undefined; onStep?: ((step: MutationStep, requestId: string) => void) | undefined }) => {
  const { upstream: u, leaseSafetyMs } = app.gatewayConfig
  const control = createControlPlane({
    ledger: app.ledger,
    client: app.upstream,
    discovery: app.discovery,
    leaseSafetyMs,
    mutationTimeoutMs: u.mutationTimeoutMs,
    readTimeoutMs: u.readTimeoutMs,
    maxTaskResponseBytes: u.maxTaskResponseBytes,
    connectTimeoutMs: u.connectTimeoutMs,
    retentionMs: app.gatewayConfig.ledgerRetentionMs,
    instanceId: randomUUID(),
    now: opts.now,
    monotonic: opts.monotonic,
    logger: (app.log as Logger).child({ component: 'control' }),
    onMutation: (operation, outcome) => app.metrics.mutations.inc({ operation, outcome }),
    onStep: opts.onStep,
    circuit: app.upstreamCircuit,
    onClockOffset: (peer, ms) => app.metrics.clockOffset.set({ peer }, ms / 1000),
    onControllerConflict: () => app.metrics.controllerConflicts.inc(),
    requireGrants: app.gatewayConfig.requireGrants,
    // a campaign's project as the remote reports it (docs/design.md#grants): the coalesced Argus read
    readCampaignList: async () => (await app.argus.read('campaign.list')).result,
    onAuthzRefused: (reason) => app.metrics.authzRefusals.inc({ reason })
  })
  app.metrics.bindLedger(() => app.ledger.countAmbiguous())
  app.decorate('control', control)
  app.addHook('onReady', async () => { await control.start() })
  app.addHook('onClose', async () => { control.stop() })
}, { name: 'control', dependencies: ['gateway-config', 'metrics', 'ledger', 'upstream', 'discovery', 'argus'] })
