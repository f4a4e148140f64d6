import { createStorage } from 'unstorage'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible, type GatewayOptions, type ProviderModel } from '../../src/index'
import { openaiAudioModels } from '../../src/providers/models/audio-models'
import { budgetsOf } from '../../src/billing/holds'
import { toUnits } from '../../src/billing/money'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'

// gateway.close() drains (docs/operations.md): new requests get 503, those in flight end up to drainTimeoutMs, the
// rest are aborted and billed as such, and only then does the gateway release what it opened.

// 0.000001 USD a prompt token, 0.000002 a completion token.
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const MODELS = ['gpt-test', 'slow', 'hang']
const json = { 'content-type': 'application/json' }
// Without its retirement date (2027-01-06), so the test does not depend on the day it runs.
const tts: ProviderModel = { ...openaiAudioModels.find((m) => m.id === 'openai/tts-1')!, expirationDate: undefined }

type Customer = Awaited<ReturnType<typeof createCustomer>>

describe('gateway.close() drains the requests in flight', () => {
  let upstream: FakeOpenAI
  const started: TestGateway[] = []

  beforeAll(async () => {
    upstream = await startFakeOpenAI({ apiKey: 'sk-up', slowMs: 150 })
  })
  afterAll(async () => {
    await Promise.all(started.map((g) => g.close()))
    await upstream?.close()
  })

  // A gateway of its own for each test (close() is for good), over a storage it does not own, so that what was billed
  // can still be read once it closed.
  const start = async (options: GatewayOptions = {}) => {
    const models: ProviderModel[] = [
      ...MODELS.map((id) => ({ id: `fake/${id}`, upstreamId: id, pricing, maxCompletionTokens: 1000 })),
      { ...tts, id: 'test/held-speech', upstreamId: 'hold' },
    ]
    const g = await startGateway({
      storage: createStorage(),
      providers: [openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models })],
      ...options,
    })
    started.push(g)
    return { g, customer: await createCustomer(g.gateway, { credits: '1' }) }
  }
  const chat = (g: TestGateway, customer: Customer, body: Record<string, unknown>) =>
    g.request('/api/v1/chat/completions', { method: 'POST', headers: { ...customer.auth, ...json }, body: JSON.stringify(body) })
  const held = async (g: TestGateway, customer: Customer) => {
    const ctx = g.gateway.context
    const principal = (await g.gateway.admin.findUserByKey(customer.key))!
    return ctx.holds.held(budgetsOf(ctx, principal).budgets[0], Date.now())
  }
  const spent = async (g: TestGateway, customer: Customer) => toUnits((await g.gateway.admin.getCredits(customer.user.org_id)).total_usage)
  const records = (g: TestGateway, customer: Customer) => g.gateway.context.usage.list(customer.user.org_id)
  // Reads a stream until `text` arrived; returns the reader to go on with and what was read.
  const readUntil = async (res: Response, text: string) => {
    const reader = res.body!.getReader()
    let seen = ''
    while (!seen.includes(text)) {
      const { done, value } = await reader.read()
      if (done) throw new Error(`the stream ended before ${text}: ${seen}`)
      seen += new TextDecoder().decode(value)
    }
    return { reader, seen }
  }
  const readRest = async (reader: ReadableStreamDefaultReader<Uint8Array>, seen: string) => {
    let raw = seen
    for (let r = await reader.read(); !r.done; r = await reader.read()) raw += new TextDecoder().decode(r.value)
    return readSse(new Response(raw))
  }
  const expectShutdown = async (res: Response) => {
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('5')
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect((await res.json()).error).toMatchObject({ code: 503, message: 'The gateway is shutting down' })
  }

  it('lets a stream that ends within the deadline finish whole, and resolves once it was billed; new requests get 503', async () => {
    const { g, customer } = await start({ drainTimeoutMs: 5000 })
    // "Hello from slow: drain me" is 5 words, 150 ms apart: the stream runs for most of a second.
    const res = await chat(g, customer, { model: 'fake/slow', stream: true, messages: [{ role: 'user', content: 'drain me' }] })
    expect(res.status).toBe(200)
    const { reader, seen } = await readUntil(res, '"content":"Hello"')
    const closing = g.close().then(() => records(g, customer))
    // Refused while it drains (the server no longer accepts connections: asked through the gateway's fetch).
    await expect.poll(() => g.gateway.context.inFlight.closing).toBe(true)
    await expectShutdown(
      await g.gateway.fetch(
        new Request(`${g.url}/api/v1/chat/completions`, {
          method: 'POST',
          headers: { ...customer.auth, ...json },
          body: JSON.stringify({ model: 'fake/gpt-test', messages: [{ role: 'user', content: 'late' }] }),
        }),
      ),
    )
    await expectShutdown(await g.gateway.fetch(new Request(`${g.url}/api/v1/models`)))

    const { events } = await readRest(reader, seen)
    expect(events.at(-1)).toBe('[DONE]')
    expect(events.some((e) => e.error)).toBe(false)
    expect(events.map((e) => e.choices?.[0]?.delta?.content ?? '').join('')).toBe('Hello from slow: drain me')
    const usage = events.at(-2).usage
    expect(usage.estimated).toBeFalsy()
    // Once close() resolved, the stream had been billed: its record was there.
    const [record] = await closing
    expect(record).toMatchObject({ status: 'success', usage_estimated: false, cost_eur: String(usage.cost_eur) })
    expect(await spent(g, customer)).toBe(toUnits(String(usage.cost_eur)))
    expect(await held(g, customer)).toBe(0n)
    expect(g.gateway.context.inFlight.size).toBe(0)
  })

  it('ends streams still running at the deadline with the error chunk, their usage and [DONE], billed exactly as cancelled', async () => {
    const { g, customer } = await start({ drainTimeoutMs: 400 })
    const abortedBefore = upstream.aborted
    const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ') // 30 × 150 ms: far past the deadline
    // More streams than an AbortSignal's default listener limit (10), all listening for the deadline.
    const opened = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const res = await chat(g, customer, { model: 'fake/slow', stream: true, max_tokens: 200, messages: [{ role: 'user', content: words }] })
        expect(res.status).toBe(200)
        return readUntil(res, '"content":"Hello"')
      }),
    )
    const closedAt = Date.now()
    const closing = g.close()
    const streams = await Promise.all(opened.map(({ reader, seen }) => readRest(reader, seen)))
    await closing
    expect(Date.now() - closedAt).toBeLessThan(5000)

    const costs: string[] = []
    for (const { events } of streams) {
      expect(events.at(-1)).toBe('[DONE]')
      const error = events.at(-3)
      expect(error.error).toMatchObject({ code: 503, message: 'The gateway is shutting down' })
      expect(error.choices[0]).toMatchObject({ finish_reason: 'error' })
      expect(events.filter((e) => e.error)).toHaveLength(1)
      const usage = events.at(-2)
      expect(usage.choices).toEqual([])
      expect(usage.usage.estimated).toBe(true)
      costs.push(String(usage.usage.cost_eur))
      // Some text came before the deadline, not all of it.
      const text = events.map((e) => (e === '[DONE]' ? '' : (e.choices?.[0]?.delta?.content ?? ''))).join('')
      expect(text.startsWith('Hello from slow:')).toBe(true)
      expect(text).not.toContain('word29')
    }

    const list = await records(g, customer)
    expect(list).toHaveLength(12)
    for (const record of list) {
      expect(record).toMatchObject({ status: 'cancelled', usage_estimated: true, stream: true })
      expect(toUnits(record.cost_eur)).toBeGreaterThan(0n)
    }
    expect(list.map((r) => r.cost_eur).sort()).toEqual(costs.sort())
    expect(await spent(g, customer)).toBe(list.reduce((sum, r) => sum + toUnits(r.cost_eur), 0n))
    expect(await held(g, customer)).toBe(0n)
    await expect.poll(() => upstream.aborted, { timeout: 3000 }).toBe(abortedBefore + 12) // the provider was stopped
  })

  it('answers a whole request still waiting on its provider at the deadline 503, charging nothing and releasing its hold', async () => {
    const { g, customer } = await start({ drainTimeoutMs: 300 })
    const sent = upstream.requests.length
    const answer = chat(g, customer, { model: 'fake/hang', max_tokens: 50, messages: [{ role: 'user', content: 'wait' }] })
    await expect.poll(() => upstream.requests.length).toBe(sent + 1)
    expect(await held(g, customer)).toBeGreaterThan(0n)
    const closing = g.close()
    await expectShutdown(await answer)
    await closing
    expect(await held(g, customer)).toBe(0n)
    expect(await spent(g, customer)).toBe(0n)
    expect(await records(g, customer)).toEqual([])
  })

  it('ends a stream whose provider has not opened at the deadline with the error chunk and [DONE], releasing its hold', async () => {
    const { g, customer } = await start({ drainTimeoutMs: 300, keepAliveMs: 50 })
    const res = await chat(g, customer, { model: 'fake/hang', stream: true, max_tokens: 50, messages: [{ role: 'user', content: 'wait' }] })
    expect(res.status).toBe(200) // keep-alive comments went out while the provider did not answer
    const closing = g.close()
    const { events } = await readSse(res)
    await closing
    expect(events).toHaveLength(2)
    expect(events[0].error).toMatchObject({ code: 503, message: 'The gateway is shutting down' })
    expect(events[0].choices[0]).toMatchObject({ finish_reason: 'error' })
    expect(events[1]).toBe('[DONE]')
    expect(await held(g, customer)).toBe(0n)
    expect(await spent(g, customer)).toBe(0n)
    expect(await records(g, customer)).toEqual([])
  })

  it('cuts speech still playing at the deadline and bills it as cancelled, as on a client abort', async () => {
    const { g, customer } = await start({ drainTimeoutMs: 300 })
    const input = 'Hold this line'
    const res = await g.request('/api/v1/audio/speech', {
      method: 'POST',
      headers: { ...customer.auth, ...json },
      body: JSON.stringify({ model: 'test/held-speech', input }),
    })
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    await reader.read() // the first chunk; the fake holds the rest
    const closing = g.close()
    await expect(async () => {
      for (let r = await reader.read(); !r.done; r = await reader.read());
    }).rejects.toThrow()
    await closing
    upstream.releaseAudio()
    const list = await records(g, customer)
    expect(list).toHaveLength(1)
    expect(list[0]).toMatchObject({ endpoint: 'speech', status: 'cancelled', characters: input.length })
    expect(await spent(g, customer)).toBe(toUnits(list[0].cost_eur))
    expect(await held(g, customer)).toBe(0n)
  })

  it('returns at once with nothing in flight, and a second close() is fine', async () => {
    const { g } = await start({ drainTimeoutMs: 10_000 })
    const began = Date.now()
    const first = g.gateway.close()
    expect(g.gateway.close()).toBe(first)
    await Promise.all([first, g.close(), g.close()])
    expect(Date.now() - began).toBeLessThan(1000)
    await g.gateway.close()
    await expectShutdown(await g.gateway.fetch(new Request(`${g.url}/api/v1/models`)))
  })
})
