// The contributor's inner loop (docs/design.md#development): `npm run test:fast` on every change,
// `npx vitest -c vitest.fast.config.ts` to re-run on every save. The hermetic folders — no
// service to start, no cluster, nothing run at length — in under 30 s on a 2-core machine.
// `npm test` (vitest.config.ts) stays the whole suite, run before a commit or a push.
import { configDefaults, defineConfig } from 'vitest/config'
import { SLOW, shared } from './vitest.config.js'

export default defineConfig({
  test: {
    ...shared,
    // and the two import walks behind walls (the qualification's, the front door's core's): a
    // move under src/ breaks them first, in well under a second
    include: ['test/{unit,ledger,simulator,docs,deploy,interop}/**/*.test.ts', 'test/qualify/import-wall.test.ts', 'test/front/wall.test.ts'],
    // PostgreSQL is a service (TEST_POSTGRES_URL) and its tests wait on it; the ledger contract
    // they run is the one the SQLite ledger passes here (test/ledger/contract.ts)
    exclude: [...configDefaults.exclude, 'test/ledger/postgres*.test.ts'],
    // a test tagged slow is npm test's alone: skipped here, and counted as skipped
    tags: [{ name: 'slow', description: SLOW, skip: true }],
    // a property test runs a tenth of its cases here, every one of them in npm test: each asks
    // test/helpers/runs.ts, which reads this share (its `ProvidedContext` types it)
    provide: { propertyRunShare: 0.1 },
    // a worker per core: vitest's default for a run leaves one core idle, one worker on two cores
    maxWorkers: '100%',
    // a worker keeps its modules from file to file: re-importing Fastify, zod and the gateway for
    // every file was about 40 % of its CPU time. So a helper's top-level hook (test/helpers/child.ts)
    // runs for the first file that imports it only: a test cleans up what it starts itself
    isolate: false
  }
})
