import Redis from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fromUnits, toUnits } from '../../src/billing/money'
import { demo } from '../../src/index'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { redisKind, type StorageKind } from '../helpers/storages'

/** How many EVALSHA calls the Redis server has answered (INFO commandstats). */
const evalshaCalls = async (redis: Redis): Promise<number> => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0)

describe.skipIf(!process.env.REDIS_URL)('the Redis stores’ Lua scripts (REDIS_URL)', () => {
  let kind: StorageKind
  let t: TestGateway
  let redis: Redis

  beforeAll(async () => {
    kind = redisKind(process.env.REDIS_URL!)
    t = await startGateway({ storage: kind.open(), providers: [demo()] })
    redis = new Redis(process.env.REDIS_URL!)
  })
  afterAll(async () => {
    await t?.close()
    await kind?.cleanup()
    redis?.disconnect()
  })

  it('run by their SHA1, loaded again after SCRIPT FLUSH, and the charges stay exact', async () => {
    const customer = await createCustomer(t.gateway, { credits: '1' })
    const chat = async () => {
      const res = await t.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { ...customer.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'count my scripts' }] }),
      })
      expect(res.status).toBe(200)
      return ((await res.json()) as { usage: { cost_eur: number } }).usage.cost_eur
    }
    const costs = [await chat()]
    const before = await evalshaCalls(redis)
    costs.push(await chat())
    // At least the hold's placing and its settling went by SHA1 (other tests on this server only add to the count).
    expect((await evalshaCalls(redis)) - before).toBeGreaterThanOrEqual(2)
    // Redis forgets every script: the next request loads them again (NOSCRIPT, then EVAL) and is billed as the others.
    await redis.script('FLUSH')
    costs.push(await chat())
    expect(costs[2]).toBe(costs[0])
    const spent = costs.reduce((sum, cost) => sum + toUnits(String(cost)), 0n)
    expect((await t.gateway.admin.getCredits(customer.user.org_id)).total_usage).toBe(fromUnits(spent))
  })
})
