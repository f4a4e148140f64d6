import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { decimalText } from '../helpers/sse'

// Expiration dates and announced price changes take effect by the gateway's clock (docs/catalogue.md).

const json = { 'content-type': 'application/json' }
const usd = (prompt: string, completion: string) => ({ prompt, completion, currency: 'USD' })

describe('retired models and announced price changes', () => {
  let upstream: FakeOpenAI
  let t: TestGateway
  let customer: Awaited<ReturnType<typeof createCustomer>>
  const clock = { now: Date.parse('2026-11-30T23:59:59Z') }

  beforeAll(async () => {
    upstream = await startFakeOpenAI()
    t = await startGateway({
      clock: () => clock.now,
      providers: [
        openaiCompatible({
          slug: 'acme',
          name: 'Acme',
          baseURL: upstream.url,
          models: [
            { id: 'acme/old', upstreamId: 'old-1', pricing: usd('0.000001', '0.000002'), expirationDate: '2026-12-01', replacement: 'acme/new' },
            { id: 'acme/gone', upstreamId: 'gone-1', pricing: usd('0.000001', '0.000002'), expirationDate: '2026-12-01', replacement: 'acme/also-gone' },
            { id: 'acme/also-gone', upstreamId: 'gone-2', pricing: usd('0.000001', '0.000002'), expirationDate: '2026-12-01' },
            {
              id: 'acme/new',
              upstreamId: 'new-1',
              pricing: usd('0.000001', '0.000002'),
              priceChanges: [{ from: '2026-12-10', pricing: usd('0.0000015', '0.000003'), note: 'announced 2026-11-01' }],
            },
            { id: 'acme/shared', upstreamId: 'shared-1', pricing: usd('0.0000001', '0.0000002'), expirationDate: '2026-12-01' },
          ],
        }),
        openaiCompatible({
          slug: 'backup',
          name: 'Backup',
          baseURL: upstream.url,
          models: [{ id: 'acme/shared', upstreamId: 'shared-2', pricing: usd('0.000005', '0.000006') }],
        }),
      ],
    })
    customer = await createCustomer(t.gateway, { credits: '10' })
  })
  afterAll(async () => {
    await t.close()
    await upstream.close()
  })

  const models = async () => (await (await t.request('/api/v1/models')).json()).data as any[]
  const chat = async (model: string) => {
    const res = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi there' }] }),
    })
    return { status: res.status, body: await res.json() }
  }

  it('serves a model until its expiration date and shows the date in /models', async () => {
    const listed = await models()
    expect(listed.find((m) => m.id === 'acme/old').expiration_date).toBe('2026-12-01')
    // Served by a provider without an end date too: no expiration for the model.
    expect(listed.find((m) => m.id === 'acme/shared')).toMatchObject({ expiration_date: null, providers: [{ slug: 'acme' }, { slug: 'backup' }] })
    expect(listed.find((m) => m.id === 'acme/new').expiration_date).toBeNull()
    const answer = await chat('acme/old')
    expect([answer.status, answer.body.model]).toEqual([200, 'acme/old'])
  })

  it('answers 404 naming the retirement and the replacement from that day on, and stops listing the model', async () => {
    clock.now = Date.parse('2026-12-01T00:00:00Z')
    const before = upstream.requests.length
    const answer = await chat('acme/old')
    expect(answer.status).toBe(404)
    expect(answer.body.error).toMatchObject({
      code: 404,
      type: 'not_found',
      param: 'model',
      message: 'Model acme/old was retired by its provider on 2026-12-01; use acme/new instead',
      metadata: { retired_on: '2026-12-01', replacement: 'acme/new' },
    })
    // A replacement that is itself gone is not offered.
    const gone = await chat('acme/gone')
    expect(gone.body.error).toMatchObject({ message: 'Model acme/gone was retired by its provider on 2026-12-01', metadata: { replacement: null } })
    expect(upstream.requests.length).toBe(before)
    const ids = (await models()).map((m) => m.id)
    expect(ids).not.toContain('acme/old')
    expect(ids).toContain('acme/new')
    const count = await (await t.request('/api/v1/models/count')).json()
    expect(count.data.count).toBe(ids.length)
    // An unknown model still says so, without a retirement.
    const unknown = await chat('acme/never')
    expect(unknown.body.error.message).toBe('Model acme/never is not available on this gateway (see GET /api/v1/models)')
  })

  it('keeps a model whose other provider still serves it, routed there only', async () => {
    const listed = (await models()).find((m) => m.id === 'acme/shared')
    expect(listed.providers).toEqual([{ name: 'Backup', slug: 'backup' }])
    expect(listed.pricing.prompt).toBe('0.000005')
    const answer = await chat('acme/shared')
    expect([answer.status, answer.body.provider]).toEqual([200, 'Backup'])
    expect(upstream.requests.at(-1)!.body.model).toBe('shared-2')
  })

  it('bills at an announced new price from its first day, exactly', async () => {
    const cost = (usage: any, prompt: bigint, completion: bigint) =>
      decimalText(BigInt(usage.prompt_tokens) * prompt + BigInt(usage.completion_tokens) * completion)
    clock.now = Date.parse('2026-12-09T23:59:59Z')
    const old = await chat('acme/new')
    expect(String(old.body.usage.cost)).toBe(cost(old.body.usage, 1_000_000n, 2_000_000n))
    clock.now = Date.parse('2026-12-10T00:00:00Z')
    expect((await models()).find((m) => m.id === 'acme/new').pricing).toMatchObject({ prompt: '0.0000015', completion: '0.000003' })
    const dearer = await chat('acme/new')
    expect(String(dearer.body.usage.cost)).toBe(cost(dearer.body.usage, 1_500_000n, 3_000_000n))
  })
})
