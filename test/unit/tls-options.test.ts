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
    expect(tlsOptionsFor(undefined)).not.toHaveProperty('ca')
  })

  it('verification is set explicitly, so NODE_TLS_REJECT_UNAUTHORIZED cannot turn it off (docs/design.md#production)', () => {
    // Node's TLS uses the variable only when rejectUnauthorized is not given; the proof over a socket is test/process/tls-reject-env.test.ts
    expect(tlsOptionsFor(undefined)).toEqual({ rejectUnauthorized: true })
    expect(tlsOptionsFor('-----BEGIN CERTIFICATE-----\n')).toMatchObject({ rejectUnauthorized: true })
  })
})
