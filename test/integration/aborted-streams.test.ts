import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible, type ProviderModel } from '../../src/index'
import { toUnits } from '../../src/billing/money'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

// o-series-like prices: 0.000001 USD a prompt token, 0.000004 a completion (and reasoning) token.
const pricing = { prompt: '0.000001', completion: '0.000004', currency: 'USD' }
const json = { 'content-type': 'application/json' }

/** Opens a stream, reads until its first chunk, then leaves; resolves with the generation id. */
async function leaveAfterFirstChunk(g: TestGateway, auth: Record<string, string>, body: Record<string, unknown>): Promise<string> {
  const controller = new AbortController()
  const res = await g.request('/api/v1/chat/completions', {
    method: 'POST',
    headers: { ...auth, ...json },
    body: JSON.stringify({ ...body, stream: true }),
    signal: controller.signal,
  })
  expect(res.status).toBe(200)
  const reader = res.body!.getReader()
  let seen = ''
  while (!seen.includes('"role":"assistant"')) seen += new TextDecoder().decode((await reader.read()).value)
  controller.abort()
  return res.headers.get('x-generation-id')!
}

describe('a client that leaves a reasoning stream before its usage chunk', () => {
  let upstream: FakeOpenAI
  let clock = Date.now()
  let waiting: TestGateway
  let impatient: TestGateway
  const model: ProviderModel = {
    id: 'fake/thinker',
    upstreamId: 'think',
    pricing,
    maxCompletionTokens: 100_000,
    supportedParameters: ['reasoning', 'max_tokens'],
    reasoning: { efforts: ['low', 'high'] },
  }

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ apiKey: 'sk-up', slowMs: 400 })
    const providers = [openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models: [model] })]
    waiting = await startGateway({ providers })
    impatient = await startGateway({ providers, abortedStreamUsageWaitMs: 50, clock: () => clock })
  })
  afterAll(async () => {
    await waiting?.close()
    await impatient?.close()
    await upstream?.close()
  })

  it('is billed what the provider reports after the client left: 20,015 completion tokens, 20,000 of them reasoning', async () => {
    const customer = await createCustomer(waiting.gateway, { credits: '10' })
    const abortedBefore = upstream.aborted
    const id = await leaveAfterFirstChunk(waiting, customer.auth, { model: 'fake/thinker', messages: [{ role: 'user', content: 'think hard' }] })
    const find = async () => (await waiting.gateway.context.usage.list(customer.user.org_id)).find((r) => r.id === id)
    await expect.poll(async () => (await find())?.status, { timeout: 3000 }).toBe('cancelled')
    const record = (await find())!
    expect(record).toMatchObject({ status: 'cancelled', completion_tokens: 20_015, reasoning_tokens: 20_000, usage_estimated: false })
    // 20,015 × 0.000004 USD plus the prompt's reported tokens × 0.000001, in EUR at 0.86.
    const promptUsd = record.prompt_tokens * 0.000001
    expect(Number(record.cost)).toBeCloseTo(promptUsd + 20_015 * 0.000004, 12)
    expect(toUnits((await waiting.gateway.admin.getCredits(customer.user.org_id)).total_usage)).toBe(toUnits(record.cost_eur))
    expect(upstream.aborted).toBe(abortedBefore) // read to its end, not cut
  })

  it('without a report in time, is billed the tokens it could have reasoned while it ran, at most max_tokens', async () => {
    const customer = await createCustomer(impatient.gateway, { credits: '10' })
    const abortedBefore = upstream.aborted
    const started = clock
    const controller = new AbortController()
    const res = await impatient.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      signal: controller.signal,
      body: JSON.stringify({ model: 'fake/thinker', stream: true, max_tokens: 5000, messages: [{ role: 'user', content: 'think hard' }] }),
    })
    const reader = res.body!.getReader()
    let seen = ''
    while (!seen.includes('"role":"assistant"')) seen += new TextDecoder().decode((await reader.read()).value)
    clock = started + 30_000 // 30 s of reasoning at 100 tokens a second would be 3,000 tokens
    controller.abort()
    const find = async () => (await impatient.gateway.context.usage.list(customer.user.org_id))[0]
    await expect.poll(async () => (await find())?.status, { timeout: 3000 }).toBe('cancelled')
    expect(await find()).toMatchObject({ status: 'cancelled', completion_tokens: 3000, usage_estimated: true })
    await expect.poll(() => upstream.aborted, { timeout: 3000 }).toBe(abortedBefore + 1) // the wait ended: the provider was stopped

    const capped = await createCustomer(impatient.gateway, { credits: '10' })
    const again = new AbortController()
    const res2 = await impatient.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...capped.auth, ...json },
      signal: again.signal,
      body: JSON.stringify({ model: 'fake/thinker', stream: true, max_tokens: 5000, messages: [{ role: 'user', content: 'think hard' }] }),
    })
    const reader2 = res2.body!.getReader()
    seen = ''
    while (!seen.includes('"role":"assistant"')) seen += new TextDecoder().decode((await reader2.read()).value)
    clock += 600_000 // ten minutes: 60,000 tokens by time, capped by max_tokens
    again.abort()
    const find2 = async () => (await impatient.gateway.context.usage.list(capped.user.org_id))[0]
    await expect.poll(async () => (await find2())?.status, { timeout: 3000 }).toBe('cancelled')
    expect(await find2()).toMatchObject({ status: 'cancelled', completion_tokens: 5000, usage_estimated: true })
  })
})
