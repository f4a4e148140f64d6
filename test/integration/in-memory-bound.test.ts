/**
 * The gateway's own default in-memory storage keeps at most `retention.inMemoryRecords` usage records, generation
 * pointers and ledger entries, the oldest going first (docs/retention.md#the-default-in-memory-storage), so that a
 * long-running process does not grow with every request; a storage the host passes is never bounded.
 */
import { describe, expect, it } from 'vitest'
import { createStorage } from 'unstorage'
import { demo } from '../../src/providers/demo'
import { fromUnits, toUnits } from '../../src/billing/money'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

/** Runs `count` chats (every other one streamed); returns their generation ids and the sum of their `cost_eur`. */
async function chats(t: TestGateway, key: string, count: number): Promise<string[] & { costEur?: string }> {
  const ids: string[] & { costEur?: string } = []
  let cost = 0n
  for (let i = 0; i < count; i++) {
    const res = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/echo', stream: i % 2 === 1, messages: [{ role: 'user', content: `Hello ${i}` }] }),
    })
    expect(res.status).toBe(200)
    const text = await res.text()
    // The exact decimal as the gateway wrote it (the last usage of the answer: a stream's usage chunk).
    cost += toUnits([...text.matchAll(/"cost_eur":([0-9.]+)/g)].at(-1)![1])
    ids.push(res.headers.get('x-generation-id')!)
  }
  ids.costEur = fromUnits(cost)
  return ids
}
const generation = (t: TestGateway, key: string, id: string) => t.request(`/api/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${key}` } })

describe('the default in-memory storage is bounded', () => {
  it('keeps the newest inMemoryRecords usage records, generation pointers and ledger entries; the balance stays exact', async () => {
    const t = await startGateway({ providers: [demo()], retention: { inMemoryRecords: 5 } })
    try {
      const { key, user } = await createCustomer(t.gateway, { credits: '1' })
      const ids = await chats(t, key, 8)
      const records = await t.gateway.admin.usage(user.org_id)
      expect(records.map((r) => r.id)).toEqual(ids.slice(3))
      expect((await generation(t, key, ids[0])).status).toBe(404)
      expect((await generation(t, key, ids[7])).status).toBe(200)
      // The grant and the first three charges went first; the balance is the counters', exact.
      const ledger = await t.gateway.admin.ledger(user.org_id)
      expect(ledger.map((e) => e.generation_id)).toEqual(ids.slice(3))
      const credits = await t.gateway.admin.getCredits(user.org_id)
      expect(credits.total_credits).toBe('1')
      expect(credits.total_usage).toBe(ids.costEur)
      // The activity rollups are per day: they still count all eight.
      const activity = await (await t.request('/api/v1/activity', { headers: { authorization: `Bearer ${key}` } })).json()
      expect(activity.data.reduce((n: number, row: { requests: number }) => n + row.requests, 0)).toBe(8)
    } finally {
      await t.close()
    }
  })

  it('0 keeps everything; a storage the host passes is never bounded', async () => {
    for (const options of [{ retention: { inMemoryRecords: 0 } }, { storage: createStorage(), retention: { inMemoryRecords: 5 } }]) {
      const t = await startGateway({ providers: [demo()], ...options })
      try {
        const { key, user } = await createCustomer(t.gateway, { credits: '1' })
        const ids = await chats(t, key, 8)
        expect((await t.gateway.admin.usage(user.org_id)).map((r) => r.id)).toEqual([...ids])
        expect((await t.gateway.admin.ledger(user.org_id)).filter((e) => e.kind === 'charge')).toHaveLength(8)
      } finally {
        await t.close()
      }
    }
  })

  it('refuses a bound that is not a whole number', async () => {
    await expect(startGateway({ retention: { inMemoryRecords: -1 } })).rejects.toThrow(/retention.inMemoryRecords/)
    await expect(startGateway({ retention: { inMemoryRecords: 1.5 } })).rejects.toThrow(/retention.inMemoryRecords/)
  })
})
