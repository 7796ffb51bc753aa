// npm run bench [-- --soak | --profile | --stalls | --instructions | --promotion | --mutations | --scale | --scale-active | --secret-guard | --all]: the
// comparison (compare.ts) by default; the 5-minute soak (soak.ts); a CPU profile of the gateway under the
// uncached read (profile.ts); the steady-rate tail split into GC and waiting for a CPU (stalls.ts); instructions
// per read, per coalesced answer and per mutation under callgrind (instructions.ts); bytes promoted to the old generation per read (promotion.ts); the mutations bench (mutations.ts); the ledger at size (scale.ts, issue 47); memory and metrics series with many campaigns and callers active (scale-active.ts); the secret guard's search per
// answer (secret-guard.ts); or the comparison then mutations.
const args = new Set(process.argv.slice(2))
if (args.has('--soak')) {
  const { soak } = await import('./soak.js')
  await soak()
} else if (args.has('--profile')) {
  const { profile } = await import('./profile.js')
  await profile()
} else if (args.has('--stalls')) {
  const { stalls } = await import('./stalls.js')
  await stalls()
} else if (args.has('--instructions')) {
  const { instructions } = await import('./instructions.js')
  await instructions()
} else if (args.has('--promotion')) {
  const { promotion } = await import('./promotion.js')
  await promotion()
} else if (args.has('--secret-guard')) {
  await import('./secret-guard.js')
} else if (args.has('--scale-active')) {
  const { scaleActive } = await import('./scale-active.js')
  await scaleActive()
} else if (args.has('--scale')) {
  const { scale } = await import('./scale.js')
  await scale()
} else if (args.has('--mutations')) {
  await mutationVariants()
} else {
  const { compare } = await import('./compare.js')
  await compare()
  if (args.has('--all')) await mutationVariants()
}

/**
 * The mutations bench on each ledger, each in a process of its own: SQLite, then — with
 * BENCH_POSTGRES_URL or TEST_POSTGRES_URL — PostgreSQL with one replica and with two.
 */
async function mutationVariants (): Promise<void> {
  const { spawnSync } = await import('node:child_process')
  const pgUrl = process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL
  const variants: Array<Record<string, string>> = [{ BENCH_LEDGER: 'sqlite' }]
  if (pgUrl !== undefined) variants.push({ BENCH_LEDGER: 'postgres', BENCH_REPLICAS: '1' }, { BENCH_LEDGER: 'postgres', BENCH_REPLICAS: '2' })
  else console.log('mutations on PostgreSQL skipped: set BENCH_POSTGRES_URL (or TEST_POSTGRES_URL)')
  for (const v of variants) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', new URL('./mutations.ts', import.meta.url).pathname], { env: { ...process.env, ...v }, stdio: 'inherit' })
    if (r.status !== 0) process.exitCode = 1
  }
}
