// The problems loadConfig names for an environment (and the files it may read), or none: what
// the configuration tests assert on.
import { ConfigError, loadConfig } from '../../src/config/index.js'

export function problems (env: Record<string, string>, files: Record<string, string> = {}): string[] {
  try {
    loadConfig(env, { readFile: (p) => { if (p in files) return files[p] as string; throw new Error('ENOENT') } })
  } catch (err) {
    if (err instanceof ConfigError) return err.problems
    throw err
  }
  return []
}
