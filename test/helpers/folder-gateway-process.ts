// A gateway in a process of its own over files in FOLDER_BASE (test/integration/shared-folder.test.ts starts two over
// one folder), with one BYOK-capable provider at UPSTREAM_URL. Prints {"url": …} once it listens; SIGTERM drains and
// closes it, with process.once as docs/operations.md shows (set before the folder lock's library is loaded).
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import { serve } from '../../adapters/node'
import { createGateway } from '../../src/index'
import { folderGatewayOptions } from './folder-gateway'

const gateway = createGateway({
  ...folderGatewayOptions(process.env.UPSTREAM_URL!),
  storage: createStorage({ driver: fsDriver({ base: process.env.FOLDER_BASE! }) }),
})
const server = await serve(gateway, { port: 0, hostname: '127.0.0.1' })
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)))
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`)
