import { defineConfig, type TestUserConfig } from 'vitest/config'

/**
 * the tag of a test whose work is seconds of CPU on its own — a child process of node (a whole
 * gateway, the bin, a logger, a second ledger, the image's health check), a kustomize render per
 * edit, a file of 100,000 records, a start that holds the loop: vitest.fast.config.ts skips it
 */
export const SLOW = 'seconds of CPU on its own (child processes, renders, a large file): npm test runs it, npm run test:fast skips it'

/** what every run shares: `npm test` below, `npm run test:fast` (vitest.fast.config.ts) */
export const shared = {
  include: ['test/**/*.test.ts'],
  testTimeout: 20_000,
  hookTimeout: 20_000,
  pool: 'forks',
  reporters: ['default'],
  // an unhandled rejection fails the test it surfaced in, vitest's `dangerouslyIgnoreUnhandledErrors`
  // staying off (docs/design.md#no-unhandled-rejection)
  setupFiles: ['test/helpers/unhandled-rejections.ts'],
  tags: [{ name: 'slow', description: SLOW }]
} satisfies TestUserConfig

/**
 * the folders whose files time the machine itself — gateways in child processes killed and
 * restarted, load at a steady rate, generated histories racing the remote's clock — run one
 * file at a time, after the rest, with both cores to themselves (docs/design.md#development)
 */
export const ONE_AT_A_TIME = ['test/process/**/*.test.ts', 'test/reliability/**/*.test.ts', 'test/model/**/*.test.ts']

// each project names its own files: a root `include` would be added to the second project's
const { include, ...everyProject } = shared

export default defineConfig({
  test: {
    ...everyProject,
    projects: [
      // a worker per core: vitest's default for a run leaves one core idle, one worker on two
      // cores, and the whole suite ran one file at a time (672 s on 2026-12-05)
      { extends: true, test: { name: 'side by side', include, exclude: ONE_AT_A_TIME, maxWorkers: '100%' } },
      { extends: true, test: { name: 'one at a time', include: ONE_AT_A_TIME, fileParallelism: false } }
    ]
  }
})
