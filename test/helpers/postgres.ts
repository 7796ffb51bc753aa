// A PostgreSQL schema of a test run's own (the brief: every run its own database or schema):
// created on TEST_POSTGRES_URL's database, reached through a URL whose search_path is it and
// whose application_name names it (so a test can find, and terminate, its own sessions).
import { randomBytes } from 'node:crypto'
import pg from 'pg'

/** a fresh schema of this run's own, and a URL whose search_path is it */
export async function freshSchema (base: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const schema = `oogw_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: base })
  await admin.connect()
  await admin.query(`CREATE SCHEMA ${schema}`)
  await admin.end()
  const u = new URL(base)
  u.searchParams.set('options', `-c search_path=${schema}`)
  // the sessions of this schema's pools are found (and terminated) by it
  u.searchParams.set('application_name', schema)
  return {
    url: u.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: base })
      await c.connect()
      await c.query(`DROP SCHEMA ${schema} CASCADE`)
      await c.end()
    }
  }
}
