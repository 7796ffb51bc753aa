// npm run bench [-- --soak | --profile | --stalls | --instructions | --mutations | --all]: the comparison
// (compare.ts) by default; the 5-minute soak (soak.ts); a CPU profile of the gateway under the uncached read
// (profile.ts); the steady-rate tail split into GC and waiting for a CPU (stalls.ts); instructions per
// read under callgrind (instructions.ts); the mutations bench (mutations.ts); or the comparison then mutations.
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
} else if (args.has('--mutations')) {
  await import('./mutations.js')
} else {
  const { compare } = await import('./compare.js')
  await compare()
  if (args.has('--all')) await import('./mutations.js')
}
