import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig, longestRequestMs, parseUpstreamUrl, redactUrl } from '../../src/config/index.js'
import { problems } from '../helpers/config-problems.js'

const callers = JSON.stringify([{ name: 'ops', tokenSha256: 'a'.repeat(64), scopes: ['read', 'control'], controllerId: 'ops-1' }])

describe('configuration', () => {
  it('starts with no configuration at all: embedded simulator, sqlite ledger, contract defaults', () => {
    const c = loadConfig({})
    expect(c.embeddedSimulator).toBe(true)
    expect(c.ledgerUrl).toBe('sqlite:./data/ledger.db')
    expect(c.upstream).toMatchObject({ connectTimeoutMs: 5000, readTimeoutMs: 15000, mutationTimeoutMs: 10000, maxResponseBytes: 4 * 1024 * 1024, maxTaskResponseBytes: 16 * 1024 * 1024, cardMaxBytes: 1024 * 1024, authScheme: 'bearer' })
    expect(c).toMatchObject({ controlEnabled: false, leaseSafetyMs: 2000, rateLimitRead: 600, rateLimitControl: 60, host: '127.0.0.1', port: 8080, metricsPort: 9464, trustProxy: false, discoveryIntervalMs: 60000 })
    // the embedded simulator plays OpenOperator as it is today: an observer's remote
    expect(c.simulatorProfile).toBe('openoperator')
  })

  it('HOST unset binds loopback outside production (with a note) and every interface in production; set, it is kept', () => {
    const dev = loadConfig({})
    expect(dev).toMatchObject({ host: '127.0.0.1', metricsHost: '127.0.0.1' })
    expect(dev.warnings).toContain('HOST is unset: both listeners bind 127.0.0.1, reachable from this machine only (the development default); set HOST=0.0.0.0 to listen on every interface')
    const prod = loadConfig({ NODE_ENV: 'production', OPENOPERATOR_URL: 'https://oo.example', SPYNEL_AGENT_ZERO_API_KEY: 's3cr3t-value-0123', GATEWAY_CALLERS: callers, GATEWAY_LEDGER_URL: 'sqlite:/tmp/x.db' })
    expect(prod).toMatchObject({ host: '0.0.0.0', metricsHost: '0.0.0.0' })
    expect(prod.warnings.join()).not.toMatch(/HOST/)
    for (const host of ['0.0.0.0', '::', '192.0.2.10', '127.0.0.1']) {
      const set = loadConfig({ HOST: host })
      expect(set).toMatchObject({ host, metricsHost: host })
      expect(set.warnings.join()).not.toMatch(/HOST/)
    }
    expect(loadConfig({ METRICS_HOST: '0.0.0.0' })).toMatchObject({ host: '127.0.0.1', metricsHost: '0.0.0.0' })
  })

  it('METRICS_HOST defaults to HOST; the shutdown grace derives from the timeouts unless GATEWAY_SHUTDOWN_GRACE_MS is set', () => {
    expect(loadConfig({ HOST: '0.0.0.0' }).metricsHost).toBe('0.0.0.0')
    expect(loadConfig({ HOST: '127.0.0.1' }).metricsHost).toBe('127.0.0.1')
    expect(loadConfig({ HOST: '0.0.0.0', METRICS_HOST: '127.0.0.1' })).toMatchObject({ host: '0.0.0.0', metricsHost: '127.0.0.1' })
    // the longest legitimate request + 1 s: lock wait 2 s + lease read + cancel's tasks/get + mutation
    expect(loadConfig({}).shutdownGraceMs).toBe(2000 + 2 * 15000 + 10000 + 1000)
    expect(loadConfig({ UPSTREAM_READ_TIMEOUT_MS: '60000', UPSTREAM_MUTATION_TIMEOUT_MS: '1000' }).shutdownGraceMs).toBe(2000 + 120000 + 1000 + 1000)
    expect(loadConfig({ GATEWAY_SHUTDOWN_GRACE_MS: '0' }).shutdownGraceMs).toBe(0)
    expect(loadConfig({ GATEWAY_SHUTDOWN_GRACE_MS: '5000' }).shutdownGraceMs).toBe(5000)
    expect(problems({ GATEWAY_SHUTDOWN_GRACE_MS: '-1', METRICS_HOST: '' }).map((x) => x.split(':')[0]).sort()).toEqual(['GATEWAY_SHUTDOWN_GRACE_MS', 'METRICS_HOST'])
  })

  it('limits failed authentications per client address: GATEWAY_RATE_LIMIT_AUTH_FAILURES, 30 a minute by default', () => {
    expect(loadConfig({}).rateLimitAuthFailures).toBe(30)
    expect(loadConfig({ GATEWAY_RATE_LIMIT_AUTH_FAILURES: '5' }).rateLimitAuthFailures).toBe(5)
    expect(problems({ GATEWAY_RATE_LIMIT_AUTH_FAILURES: '0' }).map((x) => x.split(':')[0])).toEqual(['GATEWAY_RATE_LIMIT_AUTH_FAILURES'])
  })

  it('takes the embedded simulator\'s profile from SIMULATOR_PROFILE, and refuses an unknown one', () => {
    expect(loadConfig({ SIMULATOR_PROFILE: 'campaign-control' }).simulatorProfile).toBe('campaign-control')
    expect(problems({ SIMULATOR_PROFILE: 'anything' }).map((x) => x.split(':')[0])).toEqual(['SIMULATOR_PROFILE'])
  })

  it('in production names every missing required variable at once', () => {
    const p = problems({ NODE_ENV: 'production' })
    expect(p).toHaveLength(4)
    for (const name of ['OPENOPERATOR_URL', 'SPYNEL_AGENT_ZERO_API_KEY', 'GATEWAY_CALLERS', 'GATEWAY_LEDGER_URL']) {
      expect(p.some((x) => x.startsWith(name))).toBe(true)
    }
  })

  it('in production accepts a complete configuration and refuses plain http even to loopback', () => {
    const env = { NODE_ENV: 'production', OPENOPERATOR_URL: 'https://oo.example', SPYNEL_AGENT_ZERO_API_KEY: 's3cr3t-value-0123', GATEWAY_CALLERS: callers, GATEWAY_LEDGER_URL: 'postgres://u:p@db/gw' }
    expect(loadConfig(env).embeddedSimulator).toBe(false)
    expect(problems({ ...env, OPENOPERATOR_URL: 'http://127.0.0.1:9000' })[0]).toMatch(/must be https/)
  })

  it('refuses userinfo, query, fragment and non-loopback http; allows loopback http outside production with a warning', () => {
    expect(parseUpstreamUrl('https://user:pw@oo.example', false)).toMatch(/userinfo/)
    expect(parseUpstreamUrl('https://oo.example/?x=1', false)).toMatch(/query/)
    expect(parseUpstreamUrl('https://oo.example/?', false)).toMatch(/query/)
    expect(parseUpstreamUrl('https://oo.example/#frag', false)).toMatch(/fragment/)
    expect(parseUpstreamUrl('http://oo.example', false)).toMatch(/https/)
    expect(parseUpstreamUrl('ftp://oo.example', false)).toMatch(/https/)
    for (const h of ['127.0.0.1', '127.9.9.9', 'localhost', '[::1]']) {
      expect(parseUpstreamUrl(`http://${h}:8000`, false)).toMatchObject({ plainHttp: true })
    }
    expect(loadConfig({ OPENOPERATOR_URL: 'http://127.0.0.1:9' }).warnings.join(' ')).toMatch(/plain http/)
  })

  it('derives the A2A base from the URL path: <url>/a2a/ exactly', () => {
    expect(parseUpstreamUrl('https://oo.example', false)).toEqual({ origin: 'https://oo.example', basePath: '/a2a', plainHttp: false })
    expect(parseUpstreamUrl('https://oo.example:8443/prefix/', false)).toEqual({ origin: 'https://oo.example:8443', basePath: '/prefix/a2a', plainHttp: false })
  })

  it('reads the secret and callers from *_FILE variants, and refuses both forms at once', () => {
    const c = loadConfig({ OPENOPERATOR_URL: 'https://oo.example', SPYNEL_AGENT_ZERO_API_KEY_FILE: '/run/secret', GATEWAY_CALLERS_FILE: '/run/callers' }, { readFile: (p) => p === '/run/secret' ? 'from-file-secret\n' : callers })
    expect(c.upstream.secret).toBe('from-file-secret')
    expect(c.callers?.[0]?.name).toBe('ops')
    expect(problems({ SPYNEL_AGENT_ZERO_API_KEY: 'a-secret-0123456789', SPYNEL_AGENT_ZERO_API_KEY_FILE: '/x' })[0]).toMatch(/both set/)
    expect(problems({ SPYNEL_AGENT_ZERO_API_KEY_FILE: '/missing' })[0]).toMatch(/SPYNEL_AGENT_ZERO_API_KEY_FILE: cannot read/)
  })

  it('reads a file it names at most 1 MiB long, and refuses a longer one at start, saying so (docs/design.md#operator-files)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'oogw-config-cap-'))
    try {
      const cap = 1024 * 1024
      const file = (name: string, text: string, size = text.length): string => {
        const path = join(dir, name)
        writeFileSync(path, text.padEnd(size, ' '))
        return path
      }
      const jwks = '{"keys":[{"kty":"EC","crv":"P-256","kid":"k","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}'
      const base = { OPENOPERATOR_URL: 'https://oo.example', SPYNEL_AGENT_ZERO_API_KEY: 'a-secret-0123456789', GATEWAY_JWT_ISSUER: 'https://idp.example', GATEWAY_JWT_AUDIENCE: 'gw' }
      // exactly the cap: read
      const fits = loadConfig({ ...base, GATEWAY_CALLERS_FILE: file('callers-fits.json', callers, cap), GATEWAY_JWT_JWKS_FILE: file('jwt-fits.json', jwks, cap), GATEWAY_CARD_JWKS_FILE: file('card-fits.json', jwks, cap) })
      expect(fits.callers?.[0]?.name).toBe('ops')
      expect(fits.cardJwks?.jwks.keys).toHaveLength(1)
      // one byte over: refused, each named, the start stops
      const over = (name: string): string => `${name}: is ${cap + 1} bytes or more, over the 1 MiB cap (1048576 bytes) for a file the gateway reads`
      expect(() => loadConfig({ ...base, GATEWAY_CALLERS_FILE: file('callers.json', callers, cap + 1), GATEWAY_JWT_JWKS_FILE: file('jwt.json', jwks, cap + 1), GATEWAY_CARD_JWKS_FILE: file('card.json', jwks, cap + 1) }))
        .toThrow(expect.objectContaining({ problems: [over('GATEWAY_CALLERS_FILE'), over('GATEWAY_JWT_JWKS_FILE'), over('GATEWAY_CARD_JWKS_FILE')] }))
      // a device or a FIFO is no file: /dev/zero would never end
      expect(() => loadConfig({ ...base, GATEWAY_CALLERS_FILE: '/dev/zero', GATEWAY_JWT_JWKS_FILE: file('jwt-ok.json', jwks) })).toThrow(expect.objectContaining({ problems: ['GATEWAY_CALLERS_FILE: cannot read the file it names'] }))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('refuses an upstream secret shorter than 16 characters, without echoing it (docs/design.md#secret-echo)', () => {
    for (const short of ['ok', 'true', 'fifteen-chars-x']) {
      const p = problems({ OPENOPERATOR_URL: 'https://oo.example', SPYNEL_AGENT_ZERO_API_KEY: short })
      expect(p).toEqual(['SPYNEL_AGENT_ZERO_API_KEY: must be at least 16 characters (a random value: the gateway refuses any answer that contains it)'])
    }
    // read from a file, the same rule
    expect(problems({ SPYNEL_AGENT_ZERO_API_KEY_FILE: '/run/secret' }, { '/run/secret': 'short\n' })[0]).toMatch(/^SPYNEL_AGENT_ZERO_API_KEY: must be at least 16 characters/)
    expect(loadConfig({ OPENOPERATOR_URL: 'https://oo.example', SPYNEL_AGENT_ZERO_API_KEY: 'sixteen-chars-xy' }).upstream.secret).toBe('sixteen-chars-xy')
  })

  it('refuses a secret that occurs in one of the gateway\'s own answers: the guard would refuse that answer for everyone', () => {
    // an error code, a window of an error body, of a probe's answer
    for (const word of ['upstream_invalid_response', '{"error":{"code":', '"ready":true,"draining"', 'remote.","retryable"']) {
      const p = problems({ OPENOPERATOR_URL: 'https://oo.example', SPYNEL_AGENT_ZERO_API_KEY: word })
      expect(p, word).toEqual(['SPYNEL_AGENT_ZERO_API_KEY: occurs in one of the gateway\'s own answers (an error body or a probe\'s answer), which the secret guard would then refuse; use a random value'])
    }
  })

  it('NODE_TLS_REJECT_UNAUTHORIZED=0: refused in production, a warning otherwise (docs/design.md#production)', () => {
    const env = { NODE_ENV: 'production', OPENOPERATOR_URL: 'https://oo.example', SPYNEL_AGENT_ZERO_API_KEY: 's3cr3t-value-0123', GATEWAY_CALLERS: callers, GATEWAY_LEDGER_URL: 'sqlite:/tmp/x.db', GATEWAY_PUBLIC_URL: 'https://gw.example' }
    expect(problems({ ...env, NODE_TLS_REJECT_UNAUTHORIZED: '0' })).toEqual(['NODE_TLS_REJECT_UNAUTHORIZED: must not be 0 when NODE_ENV=production (it turns off certificate checks for every TLS connection of the process); unset it'])
    // any other value leaves Node's verification on: nothing to say
    for (const v of ['1', '', 'false']) expect(loadConfig({ ...env, NODE_TLS_REJECT_UNAUTHORIZED: v }).warnings).toEqual([])
    const dev = loadConfig({ OPENOPERATOR_URL: 'https://oo.example', NODE_TLS_REJECT_UNAUTHORIZED: '0' })
    expect(dev.warnings.join('\n')).toMatch(/NODE_TLS_REJECT_UNAUTHORIZED=0 is set: the upstream's certificate is verified regardless/)
    expect(loadConfig({}).warnings.join()).not.toMatch(/NODE_TLS_REJECT_UNAUTHORIZED/)
  })

  it('never echoes a secret or a token digest in its messages', () => {
    const secret = 'hunter2 has spaces'
    const p = problems({ NODE_ENV: 'production', SPYNEL_AGENT_ZERO_API_KEY: secret, GATEWAY_CALLERS: '[{"name":"x","tokenSha256":"not-a-digest-XYZ","scopes":["read"]}]' })
    const text = p.join('\n')
    expect(text).toMatch(/SPYNEL_AGENT_ZERO_API_KEY/)
    expect(text).not.toContain(secret)
    expect(text).not.toContain('not-a-digest-XYZ')
  })

  it('requires a unique controllerId for callers with the control scope', () => {
    const base = { name: 'a', tokenSha256: 'b'.repeat(64), scopes: ['control'] }
    expect(problems({ GATEWAY_CALLERS: JSON.stringify([base]) })[0]).toMatch(/controllerId/)
    const dup = [{ ...base, controllerId: 'c' }, { ...base, name: 'b', tokenSha256: 'c'.repeat(64), controllerId: 'c' }]
    expect(problems({ GATEWAY_CALLERS: JSON.stringify(dup) }).join()).toMatch(/not unique/)
    expect(problems({ GATEWAY_CALLERS: 'not json' })[0]).toMatch(/GATEWAY_CALLERS: not valid JSON/)
  })

  it('a static caller\'s name may not start with jwt: in any letter case (reserved for callers from the identity provider)', () => {
    for (const name of ['jwt:x', 'JWT:x', 'Jwt:x', 'jWt:ops']) {
      const named = JSON.stringify([{ name, tokenSha256: 'a'.repeat(64), scopes: ['read'] }])
      expect(problems({ GATEWAY_CALLERS: named }), name).toEqual(['GATEWAY_CALLERS[0].name: must not start with "jwt:" (reserved for callers from the identity provider)'])
    }
    // only the prefix: the letters elsewhere in a name are the operator's
    expect(problems({ GATEWAY_CALLERS: JSON.stringify([{ name: 'ops-jwt:x', tokenSha256: 'a'.repeat(64), scopes: ['read'] }]) })).toEqual([])
  })

  it('names every problem at once: a bad variable does not hide the checks after it', () => {
    const badCallers = JSON.stringify([
      { name: 'ops', tokenSha256: 'a'.repeat(64), scopes: ['read'] },
      { name: 'ctl', tokenSha256: 'b'.repeat(64), scopes: ['read', 'control'] }
    ])
    const p = problems({ PORT: 'abc', GATEWAY_CALLERS: badCallers, GATEWAY_TRUST_PROXY: 'yes', SPYNEL_AGENT_ZERO_API_KEY: 'short' })
    expect(p).toEqual([
      'PORT: must be a whole number from 0 to 65535',
      'SPYNEL_AGENT_ZERO_API_KEY: must be at least 16 characters (a random value: the gateway refuses any answer that contains it)',
      'GATEWAY_CALLERS[1].controllerId: required for a caller with the control scope',
      expect.stringMatching(/^GATEWAY_TRUST_PROXY: must be false, true/)
    ])
    // a check across two variables is skipped when one of them is itself bad, rather than judged on a default
    expect(problems({ GATEWAY_REQUEST_TIMEOUT_MS: 'x', GATEWAY_HEADERS_TIMEOUT_MS: '20000' })).toEqual(['GATEWAY_REQUEST_TIMEOUT_MS: must be a whole number from 1 to 600000'])
    expect(problems({ UPSTREAM_MAX_TASK_RESPONSE_BYTES: '1', GATEWAY_TASK_BODY_BUDGET_BYTES: '2048' }).map((x) => x.split(':')[0])).toEqual(['UPSTREAM_MAX_TASK_RESPONSE_BYTES'])
    expect(problems({ GATEWAY_DISCOVERY_INTERVAL_MS: 'x', GATEWAY_DISCOVERY_MIN_INTERVAL_MS: '70000' }).map((x) => x.split(':')[0])).toEqual(['GATEWAY_DISCOVERY_INTERVAL_MS'])
    // an empty required variable in production is named once, as what it is
    expect(problems({ NODE_ENV: 'production', OPENOPERATOR_URL: '', GATEWAY_LEDGER_URL: '' }).filter((x) => /^(OPENOPERATOR_URL|GATEWAY_LEDGER_URL)/.test(x))).toEqual([
      'OPENOPERATOR_URL: must not be empty',
      'GATEWAY_LEDGER_URL: must not be empty'
    ])
  })

  it('words each problem with a readable path, whatever is wrong with a caller', () => {
    const p = problems({
      LOG_LEVEL: 'loud',
      GATEWAY_CONTROL_ENABLED: 'yes',
      GATEWAY_CALLERS: JSON.stringify([
        { name: '', tokenSha256: 'a'.repeat(64), scopes: ['read'] },
        { name: 'b', tokenSha256: 'not-hex', scopes: ['control'], extra: 1 },
        { name: 'c', tokenSha256: 'c'.repeat(64), scopes: [] }
      ])
    })
    expect(p).toEqual([
      'GATEWAY_CONTROL_ENABLED: must be one of "0", "1", "true", "false"',
      'LOG_LEVEL: must be one of "fatal", "error", "warn", "info", "debug", "trace", "silent"',
      'GATEWAY_CALLERS[0].name: must not be empty',
      'GATEWAY_CALLERS[1].tokenSha256: must be 64 hex characters',
      'GATEWAY_CALLERS[1].extra: unknown field',
      'GATEWAY_CALLERS[1].controllerId: required for a caller with the control scope',
      'GATEWAY_CALLERS[2].scopes: must not be empty'
    ])
    expect(problems({ GATEWAY_CALLERS: '{}' })).toEqual(['GATEWAY_CALLERS: must be an array'])
    expect(problems({ GATEWAY_CALLERS: '[]' })).toEqual(['GATEWAY_CALLERS: must not be empty'])
  })

  it('grants (docs/design.md#grants): GATEWAY_REQUIRE_GRANTS off by default; grants claims in GATEWAY_JWT_CLAIMS; the callers\' object form with a grants table, and its problems named where they are', () => {
    expect(loadConfig({}).requireGrants).toBe(false)
    expect(loadConfig({ GATEWAY_REQUIRE_GRANTS: 'true' }).requireGrants).toBe(true)
    expect(problems({ GATEWAY_REQUIRE_GRANTS: 'yes' })).toEqual(['GATEWAY_REQUIRE_GRANTS: must be one of "0", "1", "true", "false"'])
    const jwt = { GATEWAY_JWT_ISSUER: 'https://idp.example', GATEWAY_JWT_AUDIENCE: 'gw', GATEWAY_JWT_JWKS_URL: 'https://idp.example/jwks' }
    expect(loadConfig({ ...jwt, GATEWAY_JWT_CLAIMS: '{"campaigns":"groups","projects":"oo_projects"}' }).jwt?.claims).toEqual({ name: 'sub', scopes: 'scope', controllerId: 'oo_controller_id', campaigns: 'groups', projects: 'oo_projects' })
    expect(problems({ ...jwt, GATEWAY_JWT_CLAIMS: '{"campaigns":""}' })).toEqual(['GATEWAY_JWT_CLAIMS.campaigns: must not be empty'])
    const table = { [`jwt:${jwt.GATEWAY_JWT_ISSUER}#u-1`]: { read: { campaigns: ['team-a-*'] } } }
    const c = loadConfig({ ...jwt, GATEWAY_CALLERS: JSON.stringify({ callers: [], grants: table }) })
    expect([c.callers, [...c.identityGrants ?? []]]).toEqual([[], [[`jwt:${jwt.GATEWAY_JWT_ISSUER}#u-1`, { read: { campaigns: ['team-a-*'] } }]]])
    expect(problems({ GATEWAY_CALLERS: JSON.stringify({ callers: [], grants: table }) })).toEqual(['GATEWAY_CALLERS: holds no static caller, and no JWT callers (GATEWAY_JWT_*) are configured to use its grants'])
    expect(problems({ GATEWAY_CALLERS: JSON.stringify({ callers: [{ name: 'a', tokenSha256: 'a'.repeat(64), scopes: ['read'], grants: { read: { campaigns: ['a b'] } } }] }) })).toEqual([
      'GATEWAY_CALLERS.callers[0].grants.read.campaigns[0]: must be a campaign id (1–128 characters of [A-Za-z0-9._:-]) or such a prefix followed by one "*" at the end (team-a-*; * alone is every campaign)'
    ])
  })

  it('names bad numeric and enum values by variable', () => {
    const p = problems({ UPSTREAM_READ_TIMEOUT_MS: 'soon', UPSTREAM_AUTH_SCHEME: 'basic', GATEWAY_CONTROL_ENABLED: 'yes' })
    expect(p.map((x) => x.split(':')[0]).sort()).toEqual(['GATEWAY_CONTROL_ENABLED', 'UPSTREAM_AUTH_SCHEME', 'UPSTREAM_READ_TIMEOUT_MS'])
  })

  it('bounds inbound connections; the idle socket timeout outlasts the longest legitimate request', () => {
    const c = loadConfig({})
    // 2 s lock wait + lease read 15 s + mutation 10 s + readback (or the cancel's tasks/get) 15 s, + 5 s
    expect(longestRequestMs(c.upstream)).toBe(42_000)
    expect(c.http).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, connectionTimeoutMs: 47_000, keepAliveTimeoutMs: 72_000, maxConnections: 4096, maxConnectionsPerAddress: 256, maxRequestsPerSocket: 1000 })
    expect(c.metricsMaxConnections).toBe(64)
    // derived from the upstream timeouts unless set
    expect(loadConfig({ UPSTREAM_READ_TIMEOUT_MS: '30000' }).http.connectionTimeoutMs).toBe(2000 + 60_000 + 10_000 + 5000)
    const set = loadConfig({ GATEWAY_HEADERS_TIMEOUT_MS: '500', GATEWAY_REQUEST_TIMEOUT_MS: '800', GATEWAY_CONNECTION_TIMEOUT_MS: '60000', GATEWAY_KEEP_ALIVE_TIMEOUT_MS: '5000', GATEWAY_MAX_CONNECTIONS: '100', GATEWAY_MAX_REQUESTS_PER_SOCKET: '0' })
    expect(set.http).toEqual({ headersTimeoutMs: 500, requestTimeoutMs: 800, connectionTimeoutMs: 60_000, keepAliveTimeoutMs: 5000, maxConnections: 100, maxConnectionsPerAddress: 7, maxRequestsPerSocket: 0 })
    expect(set.warnings.join()).not.toMatch(/GATEWAY_CONNECTION_TIMEOUT_MS/)
    // shorter than a slow mutation: allowed, with a warning
    expect(loadConfig({ GATEWAY_CONNECTION_TIMEOUT_MS: '20000' }).warnings.join()).toMatch(/GATEWAY_CONNECTION_TIMEOUT_MS is not above the longest legitimate request \(42000 ms\)/)
    expect(problems({ GATEWAY_HEADERS_TIMEOUT_MS: '40000' })).toEqual(['GATEWAY_HEADERS_TIMEOUT_MS: must not exceed GATEWAY_REQUEST_TIMEOUT_MS'])
    expect(problems({ GATEWAY_MAX_CONNECTIONS: '0' }).map((x) => x.split(':')[0])).toEqual(['GATEWAY_MAX_CONNECTIONS'])
  })

  it('bounds connections per client address: a sixteenth of the cap, none behind a trusted ingress unless set; the metrics listener has its own cap', () => {
    expect(loadConfig({ GATEWAY_MAX_CONNECTIONS: '400' }).http.maxConnectionsPerAddress).toBe(25)
    expect(loadConfig({ GATEWAY_TRUST_PROXY: '1' }).http.maxConnectionsPerAddress).toBe(0)
    expect(loadConfig({ GATEWAY_TRUST_PROXY: '1', GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: '500' }).http.maxConnectionsPerAddress).toBe(500)
    expect(loadConfig({ GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: '0' }).http.maxConnectionsPerAddress).toBe(0)
    expect(loadConfig({ METRICS_MAX_CONNECTIONS: '8' }).metricsMaxConnections).toBe(8)
    expect(problems({ GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: '-1', METRICS_MAX_CONNECTIONS: '0' }).map((x) => x.split(':')[0]).sort()).toEqual(['GATEWAY_MAX_CONNECTIONS_PER_ADDRESS', 'METRICS_MAX_CONNECTIONS'])
  })

  it('GATEWAY_TRUST_PROXY: false, true (with a warning), a hop count (with a warning) or the ingress addresses; anything else refused', () => {
    expect(loadConfig({}).trustProxy).toBe(false)
    expect(loadConfig({ GATEWAY_TRUST_PROXY: '0' }).trustProxy).toBe(false)
    const all = loadConfig({ GATEWAY_TRUST_PROXY: 'true' })
    expect(all.trustProxy).toBe(true)
    expect(all.warnings.join()).toMatch(/GATEWAY_TRUST_PROXY=true trusts every X-Forwarded-For entry/)
    // `1` was `true` before: now one hop, the ingress that appends
    const hop = loadConfig({ GATEWAY_TRUST_PROXY: '1' })
    expect(hop.trustProxy).toBe(1)
    expect(hop.warnings.join()).toMatch(/trusts the last 1 hop\(s\) whoever connects/)
    expect(loadConfig({ GATEWAY_TRUST_PROXY: ' 10.0.0.0/8, fd00::/8 ,192.0.2.7,::1,loopback ' }).trustProxy).toEqual(['10.0.0.0/8', 'fd00::/8', '192.0.2.7', '::1', 'loopback'])
    expect(loadConfig({ GATEWAY_TRUST_PROXY: '10.0.0.0/8' }).warnings.join()).not.toMatch(/GATEWAY_TRUST_PROXY/)
    for (const bad of ['yes', '-1', '33', '10.0.0.0/33', '10.0.0.0/8,', '300.1.1.1', 'fd00::/129', 'example.com']) {
      expect(problems({ GATEWAY_TRUST_PROXY: bad }), bad).toEqual([expect.stringMatching(/^GATEWAY_TRUST_PROXY: must be false, true, a hop count \(1–32\) or a comma-separated list of addresses or CIDRs/)])
    }
  })

  it('bounds upstream pressure: read queue 128, task body budget 64 MiB (at least one task answer), event-loop shedding at 200 ms, utilisation off', () => {
    const c = loadConfig({})
    expect(c.upstream).toMatchObject({ readQueueMax: 128, bodyBudgetBytes: 64 * 1024 * 1024 })
    expect(c.pressure).toEqual({ maxEventLoopDelayMs: 200, maxEventLoopUtilization: 0 })
    const set = loadConfig({ GATEWAY_UPSTREAM_QUEUE_MAX: '32', GATEWAY_TASK_BODY_BUDGET_BYTES: String(20 * 1024 * 1024), GATEWAY_MAX_EVENT_LOOP_DELAY_MS: '0', GATEWAY_MAX_EVENT_LOOP_UTILIZATION: '0' })
    expect(set.upstream).toMatchObject({ readQueueMax: 32, bodyBudgetBytes: 20 * 1024 * 1024 })
    expect(set.pressure).toEqual({ maxEventLoopDelayMs: 0, maxEventLoopUtilization: 0 })
    // a budget below one allowed task answer would shed that answer every time
    expect(problems({ GATEWAY_TASK_BODY_BUDGET_BYTES: String(8 * 1024 * 1024) })).toEqual(['GATEWAY_TASK_BODY_BUDGET_BYTES: must be at least UPSTREAM_MAX_TASK_RESPONSE_BYTES'])
    expect(problems({ GATEWAY_UPSTREAM_QUEUE_MAX: '0', GATEWAY_MAX_EVENT_LOOP_UTILIZATION: '1.5' }).map((x) => x.split(':')[0]).sort()).toEqual(['GATEWAY_MAX_EVENT_LOOP_UTILIZATION', 'GATEWAY_UPSTREAM_QUEUE_MAX'])
  })

  it('redacts a ledger password wherever it is printed', () => {
    expect(redactUrl('postgres://gw:topsecret@db:5432/gw')).toBe('postgres://gw:***@db:5432/gw')
    expect(redactUrl('sqlite:./data/ledger.db')).toBe('sqlite:./data/ledger.db')
  })
})
