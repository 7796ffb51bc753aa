// Test TLS material (test/fixtures/tls): a CA the gateway is told about, and one it is not.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const dir = new URL('../fixtures/tls/', import.meta.url)
const read = (name: string): string => readFileSync(new URL(name, dir), 'utf8')

export const TRUSTED_CA_FILE = fileURLToPath(new URL('trusted-ca.pem', dir))
export const trustedServer = { cert: read('trusted-server.pem'), key: read('trusted-server.key') }
export const unknownServer = { cert: read('unknown-server.pem'), key: read('unknown-server.key') }
