// The qualify command's configuration and arguments (no sockets): what it requires, the
// gateway's URL rules, the _FILE variant, the exact 40-hex SHA, and usage errors (exit 2).
import { describe, expect, it } from 'vitest'
import { QualifyConfigError, loadQualifyConfig } from '../../src/qualify/config.js'
import { qualify } from './helpers.js'

const SHA = '5e1f0c0ffee0123456789abcdef0123456789abc'
const base = { OPENOPERATOR_URL: 'https://oo.example/prefix/', SPYNEL_AGENT_ZERO_API_KEY: 'k-1', EXPECTED_SOURCE_SHA: SHA }
const problems = (env: Record<string, string | undefined>, readFile?: (p: string) => string): string[] => {
  try {
    loadQualifyConfig(env, { readFile })
    return []
  } catch (err) {
    if (err instanceof QualifyConfigError) return err.problems
    throw err
  }
}

describe('loadQualifyConfig', () => {
  it('keeps the URL path as a prefix and applies the defaults', () => {
    const c = loadQualifyConfig(base)
    expect(c).toMatchObject({ origin: 'https://oo.example', prefix: '/prefix', authScheme: 'bearer', connectTimeoutMs: 5000, assertionTimeoutMs: 15_000, maxResponseBytes: 4 * 1024 * 1024, maxTaskResponseBytes: 16 * 1024 * 1024, caPem: undefined, warnings: [] })
  })

  it('requires the URL, the secret and the expected SHA, naming each', () => {
    const p = problems({})
    expect(p.join('\n')).toMatch(/OPENOPERATOR_URL: required/)
    expect(p.join('\n')).toMatch(/EXPECTED_SOURCE_SHA: required/)
    expect(p.join('\n')).toMatch(/SPYNEL_AGENT_ZERO_API_KEY \(or SPYNEL_AGENT_ZERO_API_KEY_FILE\): required/)
  })

  it('an empty value counts as unset', () => {
    expect(problems({ ...base, EXPECTED_SOURCE_SHA: '' }).join()).toMatch(/EXPECTED_SOURCE_SHA: required/)
  })

  it.each([
    ['5e1f0c0', 'abbreviated'],
    [SHA.toUpperCase(), 'upper case'],
    [`${SHA}0`, 'too long'],
    [`g${SHA.slice(1)}`, 'not hex']
  ])('refuses EXPECTED_SOURCE_SHA %s (%s)', (sha) => {
    expect(problems({ ...base, EXPECTED_SOURCE_SHA: sha })).toEqual(['EXPECTED_SOURCE_SHA: must be a full 40-hex commit in lower case (as git prints it), compared exactly'])
  })

  it.each([
    ['http://oo.example', /must be https/],
    ['https://user:pw@oo.example', /userinfo/],
    ['https://oo.example/?a=1', /query/],
    ['https://oo.example/#x', /fragment/],
    ['ftp://oo.example', /must be https/],
    ['not a url', /not a valid URL/]
  ])('refuses OPENOPERATOR_URL %s', (url, message) => {
    expect(problems({ ...base, OPENOPERATOR_URL: url }).join()).toMatch(message)
  })

  it('allows plain http to loopback outside production, with a warning; never in production', () => {
    expect(loadQualifyConfig({ ...base, OPENOPERATOR_URL: 'http://127.0.0.1:8090' }).warnings).toEqual(['OPENOPERATOR_URL uses plain http to a loopback host'])
    expect(problems({ ...base, OPENOPERATOR_URL: 'http://127.0.0.1:8090', NODE_ENV: 'production' }).join()).toMatch(/must be https/)
  })

  it('reads the secret and the CA from files, stripping one newline; refuses both forms of the secret', () => {
    const files: Record<string, string> = { '/s/key': 'from-file\n', '/s/ca.pem': '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n' }
    const read = (p: string): string => { if (files[p] === undefined) throw new Error('ENOENT'); return files[p] }
    const c = loadQualifyConfig({ ...base, SPYNEL_AGENT_ZERO_API_KEY: undefined, SPYNEL_AGENT_ZERO_API_KEY_FILE: '/s/key', UPSTREAM_CA_FILE: '/s/ca.pem' }, { readFile: read })
    expect(c.secret).toBe('from-file')
    expect(c.caPem).toContain('BEGIN CERTIFICATE')
    expect(problems({ ...base, SPYNEL_AGENT_ZERO_API_KEY_FILE: '/s/key' }, read)).toEqual(['SPYNEL_AGENT_ZERO_API_KEY and SPYNEL_AGENT_ZERO_API_KEY_FILE are both set; set one'])
    expect(problems({ ...base, SPYNEL_AGENT_ZERO_API_KEY: undefined, SPYNEL_AGENT_ZERO_API_KEY_FILE: '/s/none' }, read)).toEqual(['SPYNEL_AGENT_ZERO_API_KEY_FILE: cannot read the file it names'])
    expect(problems({ ...base, UPSTREAM_CA_FILE: '/s/key' }, read)).toEqual(['UPSTREAM_CA_FILE: not a PEM certificate bundle'])
  })

  it('refuses an unknown auth scheme and out-of-range bounds', () => {
    expect(problems({ ...base, UPSTREAM_AUTH_SCHEME: 'basic' }).join()).toMatch(/UPSTREAM_AUTH_SCHEME/)
    expect(problems({ ...base, UPSTREAM_READ_TIMEOUT_MS: '0' }).join()).toMatch(/UPSTREAM_READ_TIMEOUT_MS/)
  })
})

describe('qualify arguments', () => {
  it.each([
    [['--bogus'], /unknown argument "--bogus"/],
    [['--observer-task'], /--observer-task needs a task id/],
    [['--observer-task', 'a b'], /--observer-task needs a task id/]
  ])('%j is a usage error (exit 2), nothing probed', async (argv, message) => {
    const run = await qualify(base, argv)
    expect(run.code).toBe(2)
    expect(run.err).toMatch(message)
    expect(run.err).toContain('usage: openoperator-gateway qualify')
    expect(run.out).toBe('')
  })

  it('--help prints the usage and exits 0 without configuration', async () => {
    const run = await qualify({}, ['--help'])
    expect(run.code).toBe(0)
    expect(run.out).toContain('usage: openoperator-gateway qualify [--json] [--observer-task ID]')
  })

  it('a configuration error exits 2 and names every problem', async () => {
    const run = await qualify({})
    expect(run.code).toBe(2)
    expect(run.err).toMatch(/^qualify: invalid configuration:/)
    expect(run.out).toBe('')
  })
})
