// The options of a describe whose tests are synchronous property tests (fc.assert over
// fc.property): no timeout. vitest cannot interrupt a synchronous test, and compares its time with
// the timeout only once it has returned, so there a timeout catches no hang (a hang never returns)
// and measures only how busy the machine is: the cases of test/unit/access-line-scrub.property.test.ts,
// 5 s on a quiet 2-core machine, took 45 s beside other work and failed the 20 s default while every
// case held (2026-12-07). How many cases run is the test's own (test/helpers/runs.ts). A test that
// awaits anything keeps the default timeout: it could hang, and a timeout would end it.
export const SYNC_PROPERTY = { timeout: 0 } as const
