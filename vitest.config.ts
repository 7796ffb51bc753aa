import { defineConfig } from 'vitest/config'

/** the tag of a check that takes seconds on its own (a file of 100,000 records): vitest.fast.config.ts skips it */
export const SLOW = 'over 5 s on its own on a 2-core machine: npm test runs it, npm run test:fast skips it'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    reporters: ['default'],
    tags: [{ name: 'slow', description: SLOW }]
  }
})
