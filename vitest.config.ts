import { defineConfig } from 'vitest/config'

/**
 * the tag of a test whose work is seconds of CPU on its own — a whole gateway started in a child
 * process, a kustomize render per edit, a file of 100,000 records: vitest.fast.config.ts skips it
 */
export const SLOW = 'seconds of CPU on its own (child processes, renders, a large file): npm test runs it, npm run test:fast skips it'

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
