// Operating the ledger over REST (docs/design.md#operating-the-ledger): an online backup of an
// SQLite ledger, streamed to an admin. The file is locked by the gateway that owns it, so a
// backup from outside goes through here (`openoperator-gateway ledger backup` calls it). The
// copy is taken with SQLite's online backup API into a private temporary file, streamed, then
// removed. A PostgreSQL ledger is backed up with pg_dump instead.
import { createReadStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { GatewayError } from '../src/core/errors.js'
import { AUTHENTICATED, USES_LEDGER, answers } from '../schemas/responses.js'

const ledger: FastifyPluginAsyncZod = async (app) => {
  app.get('/v1/admin/ledger/backup', {
    config: { scope: 'admin' },
    schema: {
      operationId: 'backupLedger',
      tags: ['ledger'],
      summary: 'A consistent copy of the SQLite ledger file, taken online (SQLite only)',
      querystring: z.strictObject({}),
      ...answers({
        200: { schema: z.any(), mediaType: 'application/vnd.sqlite3', description: 'The SQLite database file, copied with SQLite\'s online backup API while the gateway runs.' }
      }, [...AUTHENTICATED, ...USES_LEDGER, 'not_found'])
    }
  }, async (_request, reply) => {
    const backupTo = app.ledger.backupTo
    if (backupTo === undefined) throw new GatewayError('not_found', { message: 'Only an SQLite ledger has a file to back up; back up PostgreSQL with pg_dump.' })
    const dir = await mkdtemp(join(tmpdir(), 'oogw-backup-'))
    const file = join(dir, 'ledger.db')
    try {
      await backupTo(file)
    } catch (err) {
      await rm(dir, { recursive: true, force: true })
      throw err
    }
    const stream = createReadStream(file)
    stream.once('close', () => { rm(dir, { recursive: true, force: true }).catch(() => undefined) })
    return reply.type('application/vnd.sqlite3').header('content-disposition', 'attachment; filename="ledger.db"').send(stream)
  })
}

export default ledger
