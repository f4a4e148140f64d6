// A gateway in a process of its own over Redis at REDIS_URL (base REDIS_BASE), with its settlement journal at JOURNAL
// and one provider at UPSTREAM_URL (test/integration/settlement-retries-redis.test.ts kills it with SIGKILL while its
// settlements are pending, then starts another on the same journal). Prints {"url": …} once it listens.
import { createStorage } from 'unstorage'
import redisDriver from 'unstorage/drivers/redis'
import { serve } from '../../adapters/node'
import { createGateway, openaiCompatible } from '../../src/index'
import { TEST_SECRET } from './server'

const gateway = createGateway({
  secret: TEST_SECRET,
  logger: false,
  drainTimeoutMs: 1000,
  metrics: { route: true },
  storage: createStorage({ driver: redisDriver({ url: process.env.REDIS_URL!, base: process.env.REDIS_BASE! }) }),
  settlementRetries: { journal: process.env.JOURNAL! },
  providers: [
    openaiCompatible({
      slug: 'up',
      name: 'Up',
      baseURL: process.env.UPSTREAM_URL!,
      apiKey: 'sk-up',
      models: [{ id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing: { prompt: '0.000001', completion: '0.000002', currency: 'USD' } }],
    }),
  ],
})
const server = await serve(gateway, { port: 0, hostname: '127.0.0.1' })
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)))
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`)
