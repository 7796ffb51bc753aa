// `npm run client:generate`: the typed client in clients/typescript/ from the gateway's own
// OpenAPI document. It builds the app in this process, as the bin would but without listening
// (an in-memory ledger; the remote's address refuses at once, and the document does not depend
// on the remote), takes the document @fastify/swagger serves at /openapi.json, and writes
//
//   clients/typescript/openapi.json    the document, as served
//   clients/typescript/src/schema.d.ts openapi-typescript's types for it
//
// test/integration/typed-client.test.ts generates both again in memory and fails, naming this
// script, when the committed files differ: a route or schema change must come with its client.
import { randomBytes } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import openapiTS, { COMMENT_HEADER, astToString, type OpenAPI3 } from 'openapi-typescript'
import pino from 'pino'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/index.js'

export const CLIENT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'clients', 'typescript')
/** the generated files, relative to CLIENT_DIR */
export const GENERATED = ['openapi.json', 'src/schema.d.ts'] as const
export type GeneratedFiles = Record<typeof GENERATED[number], string>

/** the document /openapi.json serves, from an app built in this process and never listening */
export async function openapiDocument (): Promise<Record<string, unknown>> {
  const config = loadConfig({
    // port 9 on loopback: the first card fetch is refused at once; the document does not need it
    OPENOPERATOR_URL: 'http://127.0.0.1:9',
    SPYNEL_AGENT_ZERO_API_KEY: randomBytes(24).toString('base64url'),
    GATEWAY_LEDGER_URL: 'sqlite::memory:',
    LOG_LEVEL: 'silent'
  })
  const app = await buildApp({ config, callers: [], logger: pino({ level: 'silent' }) })
  try {
    await app.ready()
    return structuredClone(app.swagger()) as Record<string, unknown>
  } finally {
    await app.close()
  }
}

/** both generated files' contents, as they should be committed */
export async function generateClientFiles (): Promise<GeneratedFiles> {
  const doc = await openapiDocument()
  const ast = await openapiTS(doc as unknown as OpenAPI3, { silent: true })
  return {
    'openapi.json': `${JSON.stringify(doc, null, 2)}\n`,
    'src/schema.d.ts': `${COMMENT_HEADER.replace(' */', ' * Run `npm run client:generate` at the repository root to regenerate it from the gateway.\n */')}${astToString(ast)}`
  }
}

async function main (): Promise<void> {
  const files = await generateClientFiles()
  for (const name of GENERATED) {
    const path = join(CLIENT_DIR, name)
    await mkdir(dirname(path), { recursive: true })
    await writeFile(path, files[name])
    console.log(`wrote ${join('clients', 'typescript', name)} (${files[name].length} bytes)`)
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err)
    process.exit(1)
  })
}
