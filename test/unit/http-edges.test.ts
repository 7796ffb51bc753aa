// The HTTP edges' pure parts (docs/design.md#http-edges): the key of the per-address bound (IPv6
// by its /64, IPv4-mapped as IPv4), the caps fitted inside the open-file limit, reading that
// limit, the hop count as a trust function, and no descriptor left as 503 `overloaded`.
import { describe, expect, it } from 'vitest'
import { DESCRIPTOR_RESERVE, addressKey, fitToDescriptors, openFilesLimit, trustProxyOption } from '../../src/http/edges.js'
import { toGatewayError } from '../../src/http/errors.js'

describe('http edges', () => {
  it('keys the per-address bound by address, IPv6 by its /64', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7')
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7')
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64')
    expect(addressKey('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64')
    expect(addressKey('2001:0db8:0001:0002::')).toBe('2001:db8:1:2::/64')
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64')
    expect(addressKey('::1')).toBe('0:0:0:0::/64')
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64')
    expect(addressKey('::ffff:1.2.3.4'.replace('ffff', 'fffe'))).toBe('0:0:0:0::/64')
    expect(addressKey(undefined)).toBeUndefined()
  })

  it('fits the listeners\' caps inside the open-file limit, saying so', () => {
    expect(fitToDescriptors(4096, 64, 1_048_576)).toEqual({ api: 4096, metrics: 64 })
    expect(fitToDescriptors(4096, 64, undefined)).toEqual({ api: 4096, metrics: 64 })
    expect(fitToDescriptors(896, 64, 896 + 64 + DESCRIPTOR_RESERVE)).toEqual({ api: 896, metrics: 64 })
    const low = fitToDescriptors(512, 64, 400)
    expect(low).toMatchObject({ api: 400 - DESCRIPTOR_RESERVE - 64, metrics: 64 })
    expect(low.warning).toMatch(/exceed the open-file limit \(400\): at most 208 API and 64 metrics sockets/)
    // a tiny limit still leaves one socket each
    expect(fitToDescriptors(512, 64, 100)).toMatchObject({ api: 1, metrics: 1 })
  })

  it('reads the open-file limit from /proc/self/limits, and nothing elsewhere', () => {
    const limits = 'Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 4096                 files\n'
    expect(openFilesLimit(() => limits)).toBe(1024)
    expect(openFilesLimit(() => { throw new Error('ENOENT') })).toBeUndefined()
    expect(openFilesLimit(() => 'Max open files unlimited unlimited files')).toBeUndefined()
  })

  it('turns a hop count into a trust function of the hop (Fastify refuses numbers)', () => {
    const trust = trustProxyOption(2) as (a: string, hop: number) => boolean
    expect([0, 1, 2].map((hop) => trust('198.51.100.1', hop))).toEqual([true, true, false])
    expect(trustProxyOption(false)).toBe(false)
    expect(trustProxyOption(['10.0.0.0/8'])).toEqual(['10.0.0.0/8'])
  })

  it('no descriptor left is 503 overloaded, retryable, never a 500', () => {
    for (const code of ['EMFILE', 'ENFILE']) {
      const ge = toGatewayError(Object.assign(new Error(`${code}: too many open files`), { code, statusCode: 500 }))
      expect(ge).toMatchObject({ code: 'overloaded', statusCode: 503, retryable: true })
      expect(ge.headers['retry-after']).toBe('1')
    }
  })
})
