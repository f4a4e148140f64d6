import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'

// Served answers feed each provider's measured throughput (docs/routing.md): what sort=throughput and the
// endpoints' figures read.

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const json = { 'content-type': 'application/json' }
const prompt = 'one two three four five six seven eight nine ten eleven twelve'

describe('measured throughput', () => {
  let fast: FakeOpenAI
  let slow: FakeOpenAI
  let t: TestGateway
  let customer: Awaited<ReturnType<typeof createCustomer>>

  beforeAll(async () => {
    fast = await startFakeOpenAI()
    slow = await startFakeOpenAI({ slowMs: 15 })
    t = await startGateway({
      providers: [
        openaiCompatible({ slug: 'fast', name: 'Fast', baseURL: fast.url, models: [{ id: 'tp/model', upstreamId: 'gpt-test', pricing }] }),
        openaiCompatible({ slug: 'slow', name: 'Slow', baseURL: slow.url, models: [{ id: 'tp/model', upstreamId: 'slow', pricing }] }),
      ],
    })
    customer = await createCustomer(t.gateway, { credits: '5' })
  })
  afterAll(async () => {
    await t.close()
    await fast.close()
    await slow.close()
  })

  const ask = async (provider: Record<string, unknown>, content = prompt) => {
    const res = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ model: 'tp/model', stream: true, messages: [{ role: 'user', content }], provider }),
    })
    const { events } = await readSse(res)
    return events[0].provider as string
  }
  const tps = (slug: string) => t.gateway.admin.health().find((h) => h.provider === slug)?.throughput_tps ?? null

  it('is measured from served answers only, and routes sort=throughput to the faster provider', async () => {
    // A short answer says nothing of speed.
    await ask({ only: ['fast'] }, 'hi')
    expect(tps('fast')).toBeNull()
    for (let i = 0; i < 3; i++) {
      expect(await ask({ only: ['fast'] })).toBe('Fast')
      expect(await ask({ only: ['slow'] })).toBe('Slow')
    }
    const [fastTps, slowTps] = [tps('fast')!, tps('slow')!]
    // The slow fake waits 15 ms before each of its 16 chunks: at most about 16 / 0.24 s ≈ 67 tokens per second.
    expect(slowTps).toBeGreaterThan(0)
    expect(slowTps).toBeLessThan(80)
    expect(fastTps).toBeGreaterThan(slowTps)
    // Equal prices: with sort=throughput the measured speed decides, unless provider.order says otherwise.
    expect(await ask({ sort: 'throughput' })).toBe('Fast')
    expect(await ask({ sort: 'throughput', order: ['slow'] })).toBe('Slow')
    const endpoints = await (await t.request('/api/v1/models/tp/model/endpoints', { headers: customer.auth })).json()
    const slowEndpoint = endpoints.data.endpoints.find((e: any) => e.tag === 'slow')
    expect(slowEndpoint.throughput_last_30m.p50).toBeGreaterThan(0)
    expect(slowEndpoint.throughput_last_30m.p50).toBeLessThan(80)
    expect(endpoints.data.endpoints.find((e: any) => e.tag === 'fast').throughput_last_30m.p50).toBeGreaterThan(slowEndpoint.throughput_last_30m.p50)
  })
})
