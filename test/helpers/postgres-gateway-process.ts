// A gateway over PostgreSQL in a process of its own (started by ./postgres-gateway.ts): PG_URL and PG_TABLE, its
// connections named PG_APP, through PG_CONNECTOR (`pool`: postgresDriver({ url }); `db0`: db0's own postgresql
// connector), the fake upstream at UPSTREAM_URL. Logs warnings and errors as JSON lines on stderr; prints {"url": …}
// once it listens; SIGTERM closes it.
import { createDatabase } from 'db0'
import postgresql from 'db0/connectors/postgresql'
import { createStorage } from 'unstorage'
import { serve } from '../../adapters/node'
import { createGateway, postgresDriver } from '../../src/index'
import { postgresFaultOptions } from './postgres-gateway'

const url = process.env.PG_URL!
const tableName = process.env.PG_TABLE!
const app = process.env.PG_APP!
const driver =
  process.env.PG_CONNECTOR === 'db0'
    ? postgresDriver({ database: createDatabase(postgresql({ url: `${url}?application_name=${app}` })), tableName })
    : postgresDriver({ url, tableName, application_name: app })
const line = (level: string) => (message: string, fields?: unknown) => process.stderr.write(`${JSON.stringify({ level, message, ...(fields as object) })}\n`)
const gateway = createGateway({
  ...postgresFaultOptions(createStorage({ driver }), process.env.UPSTREAM_URL!),
  logger: { debug() {}, info() {}, warn: line('warn'), error: line('error') },
})
const server = await serve(gateway, { port: 0, hostname: '127.0.0.1' })
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)))
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`)
