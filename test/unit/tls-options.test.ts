import { rootCertificates } from 'node:tls'
import { describe, expect, it } from 'vitest'
import { tlsOptionsFor } from '../../src/upstream/client.js'

describe('UPSTREAM_CA_FILE', () => {
  it('is trusted in addition to the system roots, never instead of them', () => {
    const pem = '-----BEGIN CERTIFICATE-----\nextra\n-----END CERTIFICATE-----\n'
    const { ca } = tlsOptionsFor(pem)
    expect(ca).toHaveLength(rootCertificates.length + 1)
    expect(ca?.slice(0, -1)).toEqual([...rootCertificates])
    expect(ca?.at(-1)).toBe(pem)
    // without a CA file Node's defaults (the system roots) stand untouched
    expect(tlsOptionsFor(undefined)).toEqual({})
  })
})
