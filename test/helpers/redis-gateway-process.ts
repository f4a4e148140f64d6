// A gateway in a process of its own over Redis at REDIS_URL (base REDIS_BASE), with one provider at UPSTREAM_URL, the
// console logger (none with LOGGER=off), `storageTimeoutMs` STORAGE_TIMEOUT_MS and the settlement journal JOURNAL when
// set. test/integration/storage-stall-redis.test.ts reads what it writes to stderr while its Redis is killed;
// test/integration/settlement-retries-redis.test.ts kills it with SIGKILL while its settlements are pending, then
// starts another on the same journal. Prints {"url": …} once it listens.
import { createStorage } from 'unstorage'
import redisDriver from 'unstorage/drivers/redis'
import { serve } from '../../adapters/node'
import { createGateway } from '../../src/index'
import { fakeUpProvider } from './providers'
import { TEST_SECRET } from './server'

const { LOGGER, STORAGE_TIMEOUT_MS, JOURNAL } = process.env
const gateway = createGateway({
  secret: TEST_SECRET,
  ...(LOGGER === 'off' ? { logger: false } : {}),
  drainTimeoutMs: 1000,
  metrics: { route: true },
  ...(STORAGE_TIMEOUT_MS ? { storageTimeoutMs: Number(STORAGE_TIMEOUT_MS) } : {}),
  ...(JOURNAL ? { settlementRetries: { journal: JOURNAL } } : {}),
  storage: createStorage({ driver: redisDriver({ url: process.env.REDIS_URL!, base: process.env.REDIS_BASE! }) }),
  providers: [fakeUpProvider({ url: process.env.UPSTREAM_URL! }, { prompt: '0.000001', completion: '0.000002', currency: 'USD' })],
})
const server = await serve(gateway, { port: 0, hostname: '127.0.0.1' })
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)))
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`)
