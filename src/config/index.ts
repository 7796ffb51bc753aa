// The configuration's public face (docs/design.md#configuration): `loadConfig(env)`, the only
// reader of the environment, and what its callers name. The parts, one concern a file: env.ts
// (the schema), types.ts (what it hands the gateway), load.ts (loadConfig), upstream.ts,
// callers.ts, trust-proxy.ts, http.ts, discovery.ts, simulator.ts, jwks-file.ts. A module the
// configuration reads for (src/config/tracing.ts, src/http/edges.ts) imports a leaf of these, never
// this file, so no circle runs through it.
export { EMBEDDED_SIMULATOR_PROTOCOLS, SIMULATOR_PROFILES, type Env } from './env.js'
export type { Config, HttpEdgeConfig, JwtConfig, PressureConfig, TrustProxy, UpstreamConfig } from './types.js'
export { ConfigError, loadConfig, type LoadConfigDeps } from './load.js'
export { longestRequestMs } from './http.js'
export { defaultPerAddress, parseTrustProxy } from './trust-proxy.js'
export { parseUpstreamUrl } from './upstream.js'
export { isLoopbackHost } from '../core/upstream-url.js'
export { redactUrl } from '../core/redact-url.js'
