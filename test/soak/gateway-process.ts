// One gateway instance of the soak, in its own process (started by test/soak/soak.ts): SOAK_STORAGE (postgres or
// redis) named SOAK_NAME, the fake upstream at SOAK_UPSTREAM_URL. Prints {"url": …} once it listens; SIGTERM closes
// it as a host would (drain, then exit); SIGKILL is the soak's crash.
import { serve } from '../../adapters/node'
import { createGateway } from '../../src/index'
import { soakOptions } from './gateway-options'
import { openSoakStorage, type SoakStorageKind } from './storage'

const { storage, close } = openSoakStorage(process.env.SOAK_STORAGE as SoakStorageKind, process.env.SOAK_NAME!)
const gateway = createGateway(soakOptions(storage, process.env.SOAK_UPSTREAM_URL!))
const server = await serve(gateway, { port: 0, hostname: '127.0.0.1', maxConnections: 4096 })
process.on('SIGTERM', async () => {
  await server.close()
  await close()
  process.exit(0)
})
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`)
