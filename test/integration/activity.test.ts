import { OpenRouter } from '@openrouter/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible, type ProviderModel } from '../../src/index'
import { fromUnits, toUnits } from '../../src/billing/money'
import type { UsageRecord } from '../../src/stores/usage'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'
import { fsKind, memoryKind, redisKind, type StorageKind } from '../helpers/storages'

const DAY = 86_400_000
const DAY1 = Date.parse('2026-11-20T10:00:00.000Z')
const DAY2 = Date.parse('2026-11-21T15:30:00.000Z')
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const cheaper = { prompt: '0.0000007', completion: '0.0000013', currency: 'USD' }
const json = { 'content-type': 'application/json' }

type Customer = Awaited<ReturnType<typeof createCustomer>>
interface Row {
  date: string
  model: string
  model_permaslug: string
  endpoint_id: string
  provider_name: string
  provider: string
  usage: number
  byok_usage_inference: number
  requests: number
  prompt_tokens: number
  completion_tokens: number
  reasoning_tokens: number
  api_key_hash?: string | null
}

/** The decimal text of each row's `usage` and `byok_usage_inference`, exactly as sent, in the order of the rows. */
const rawAmounts = (text: string, name: string) => [...text.matchAll(new RegExp(`"${name}":(-?[0-9.]+)`, 'g'))].map((m) => m[1])

/** The expected rows from usage records: grouped by the UTC day of created_at, model and provider. */
function expectedRows(records: UsageRecord[]) {
  const groups = new Map<
    string,
    { date: string; model: string; provider: string; requests: number; prompt: number; completion: number; reasoning: number; units: bigint }
  >()
  for (const r of records) {
    const key = `${r.created_at.slice(0, 10)} ${r.model} ${r.provider}`
    const group = groups.get(key) ?? {
      date: r.created_at.slice(0, 10),
      model: r.model,
      provider: r.provider,
      requests: 0,
      prompt: 0,
      completion: 0,
      reasoning: 0,
      units: 0n,
    }
    group.requests++
    group.prompt += r.prompt_tokens
    group.completion += r.completion_tokens
    group.reasoning += r.reasoning_tokens
    group.units += toUnits(r.cost_eur)
    groups.set(key, group)
  }
  return groups
}

/** Two gateway instances over one storage of `makeKind`, with an injected clock, in front of one fake upstream. */
function describeActivity(makeKind: () => StorageKind) {
  let kind: StorageKind
  let upstream: FakeOpenAI
  let a: TestGateway
  let b: TestGateway
  let now = DAY1
  let customer: Customer
  let secondKey: { key: string; hash: string }
  // The org's management key: /activity shows it the whole org; an API key sees only its own requests.
  let manager: { authorization: string }

  beforeAll(async () => {
    kind = makeKind()
    upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
    const models = (prices: typeof pricing): ProviderModel[] => [
      { id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing: prices, maxCompletionTokens: 1000 },
      { id: 'fake/reasoning', upstreamId: 'gpt-reasoning', pricing: prices, maxCompletionTokens: 1000 },
    ]
    const options = () => ({
      storage: kind.open(),
      clock: () => now,
      keepAliveMs: 1000,
      retention: { sweepIntervalSeconds: 0 },
      providers: [
        openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models: models(pricing) }),
        openaiCompatible({ slug: 'down', name: 'Down', baseURL: upstream.url, apiKey: 'sk-up', models: models(cheaper) }),
      ],
    })
    a = await startGateway(options())
    b = await startGateway(options())
    customer = await createCustomer(a.gateway, { credits: '10' })
    const issued = await a.gateway.admin.issueKey({ userId: customer.user.id, label: 'second key' })
    secondKey = { key: issued.key, hash: issued.record.hash }
    const managerKey = await a.gateway.admin.issueKey({ userId: customer.user.id, label: 'manager', management: true })
    manager = { authorization: `Bearer ${managerKey.key}` }
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    await upstream?.close()
    await kind?.cleanup()
  })

  const chat = async (g: TestGateway, body: Record<string, unknown>, key = customer.key) => {
    const res = await g.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, ...json, 'http-referer': 'https://app.example/', 'x-title': 'Activity App' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'count my activity' }], ...body }),
    })
    expect(res.status).toBe(200)
    if (body.stream) await readSse(res)
    else await res.json()
  }
  const activity = async (g: TestGateway, query = '', who: { authorization: string } = manager) => {
    const res = await g.request(`/api/v1/activity${query}`, { headers: who })
    const text = await res.text()
    return { status: res.status, text, body: JSON.parse(text) as { data: Row[] } }
  }

  it(`sums per day, model and provider equal the usage records exactly, over two days and two instances`, async () => {
    now = DAY1
    await chat(a, { model: 'fake/gpt-test' })
    await chat(b, { model: 'fake/gpt-test', stream: true })
    await chat(a, { model: 'fake/gpt-test', provider: { only: ['up'] } })
    await chat(b, { model: 'fake/reasoning', provider: { only: ['up'] }, stream: true })
    await chat(a, { model: 'fake/reasoning', provider: { only: ['down'] } }, secondKey.key)

    // The next day: concurrent requests on both instances, mixed models, providers, keys, whole and streamed.
    now = DAY2
    await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        chat(
          i % 2 ? a : b,
          { model: i % 3 ? 'fake/gpt-test' : 'fake/reasoning', provider: { only: [i % 4 ? 'down' : 'up'] }, stream: i % 5 === 0 },
          i % 6 ? customer.key : secondKey.key,
        ),
      ),
    )

    const records = await a.gateway.context.usage.list(customer.user.org_id)
    expect(records).toHaveLength(29)
    const groups = expectedRows(records)
    expect(new Set([...groups.values()].map((g) => g.date))).toEqual(new Set(['2026-11-20', '2026-11-21']))

    const { status, text, body } = await activity(a)
    expect(status).toBe(200)
    expect(body.data).toHaveLength(groups.size)
    const usages = rawAmounts(text, 'usage')
    const byok = rawAmounts(text, 'byok_usage_inference')
    expect(usages).toHaveLength(body.data.length)
    body.data.forEach((row, i) => {
      const group = groups.get(`${row.date} ${row.model} ${row.provider}`)!
      expect(group).toBeDefined()
      expect(row).toMatchObject({
        requests: group.requests,
        prompt_tokens: group.prompt,
        completion_tokens: group.completion,
        reasoning_tokens: group.reasoning,
        model_permaslug: row.model,
        provider_name: row.provider === 'up' ? 'Up' : 'Down',
        byok_usage_inference: 0,
      })
      expect(row.endpoint_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(usages[i]).toBe(fromUnits(group.units)) // exact: the decimal text of the sum of the records' cost_eur
      expect(byok[i]).toBe('0')
    })
    // Newest day first; the reasoning model's reasoning tokens are counted.
    expect(body.data[0].date).toBe('2026-11-21')
    expect(body.data[body.data.length - 1].date).toBe('2026-11-20')
    expect(body.data.some((row) => row.reasoning_tokens > 0)).toBe(true)
    // Together they are what the credits were charged, and the other instance answers the same.
    const total = usages.reduce((sum, text) => sum + toUnits(text), 0n)
    expect(fromUnits(total)).toBe((await a.gateway.admin.getCredits(customer.user.org_id)).total_usage)
    expect((await activity(b)).text).toBe(text)
  })

  it(`filters by date, API key and user, splits by key, and shows nothing of another org`, async () => {
    const all = (await activity(a)).body.data
    const day1 = await activity(a, '?date=2026-11-20')
    expect(day1.body.data).toEqual(all.filter((row) => row.date === '2026-11-20'))

    const split = await activity(a, '?group_by=api_key')
    expect(split.body.data.every((row) => row.api_key_hash === customer.record.hash || row.api_key_hash === secondKey.hash)).toBe(true)
    const second = await activity(a, `?api_key_hash=${secondKey.hash}`)
    const secondRecords = (await a.gateway.context.usage.list(customer.user.org_id)).filter((r) => r.key_hash === secondKey.hash)
    expect(second.body.data.reduce((n, row) => n + row.requests, 0)).toBe(secondRecords.length)
    expect(fromUnits(rawAmounts(second.text, 'usage').reduce((sum, text) => sum + toUnits(text), 0n))).toBe(
      fromUnits(secondRecords.reduce((sum, r) => sum + toUnits(r.cost_eur), 0n)),
    )
    // Split by key, each (day, model, provider) adds up to the combined row.
    for (const row of all) {
      const parts = split.body.data.filter((part) => part.date === row.date && part.model === row.model && part.provider === row.provider)
      expect(parts.reduce((n, part) => n + part.requests, 0)).toBe(row.requests)
      expect(parts.reduce((n, part) => n + part.prompt_tokens, 0)).toBe(row.prompt_tokens)
    }
    expect((await activity(a, `?user_id=${customer.user.id}`)).text).toBe((await activity(a)).text)
    expect((await activity(a, '?user_id=someone-else')).body.data).toEqual([])
    expect(
      (await activity(a, '?group_by=workspace')).body.data.every((row) => (row as Row & { workspace_id: string }).workspace_id === customer.user.org_id),
    ).toBe(true)

    const stranger = await createCustomer(a.gateway, { credits: '1' })
    expect((await activity(b, '', stranger.auth)).body.data).toEqual([])

    for (const query of ['?date=2026-10-01', '?date=2026-11-31', '?date=yesterday', '?api_key_hash=abc', '?group_by=model']) {
      const refused = await activity(a, query)
      expect(refused.status).toBe(400)
      expect(refused.body).toMatchObject({ error: { type: 'invalid_request' } })
    }
    expect((await a.request('/api/v1/activity')).status).toBe(401)
  })

  it(`an API key sees only its own requests; another key's hash is a 403; the management key sees every key`, async () => {
    const records = await a.gateway.context.usage.list(customer.user.org_id)
    for (const [key, hash] of [
      [customer.key, customer.record.hash],
      [secondKey.key, secondKey.hash],
    ]) {
      const who = { authorization: `Bearer ${key}` }
      const own = expectedRows(records.filter((r) => r.key_hash === hash))
      const { status, text, body } = await activity(a, '', who)
      expect(status).toBe(200)
      expect(body.data.map((row) => `${row.date} ${row.model} ${row.provider} ${row.requests}`).sort()).toEqual(
        [...own.entries()].map(([group, totals]) => `${group} ${totals.requests}`).sort(),
      )
      expect(rawAmounts(text, 'usage').sort()).toEqual(body.data.map((row) => fromUnits(own.get(`${row.date} ${row.model} ${row.provider}`)!.units)).sort())
      // The same as the management key filtered by that key, on either instance; its own hash named is the same.
      expect(text).toBe((await activity(b, `?api_key_hash=${hash}`)).text)
      expect((await activity(b, `?api_key_hash=${hash}`, who)).text).toBe(text)
      // Split by key: its own rows only.
      expect(new Set((await activity(a, '?group_by=api_key', who)).body.data.map((row) => row.api_key_hash))).toEqual(new Set([hash]))
      // Another key's activity is refused, naming the parameter.
      const other = hash === secondKey.hash ? customer.record.hash : secondKey.hash
      const refused = await activity(a, `?api_key_hash=${other}`, who)
      expect(refused.status).toBe(403)
      expect(refused.body).toMatchObject({ error: { type: 'forbidden', param: 'api_key_hash' } })
    }
    // The management key's split shows both keys.
    expect(new Set((await activity(a, '?group_by=api_key')).body.data.map((row) => row.api_key_hash))).toEqual(new Set([customer.record.hash, secondKey.hash]))
  })

  it(`parses with OpenRouter's own client`, async () => {
    const client = new OpenRouter({ apiKey: customer.key, serverURL: `${a.url}/api/v1` })
    const managing = new OpenRouter({ apiKey: manager.authorization.slice('Bearer '.length), serverURL: `${a.url}/api/v1` })
    const result = await managing.analytics.getUserActivity({ date: '2026-11-21' })
    const plain = (await activity(a, '?date=2026-11-21')).body.data
    expect(result.data.map((item) => [item.date, item.model, item.providerName, item.requests, item.usage, item.promptTokens, item.reasoningTokens])).toEqual(
      plain.map((row) => [row.date, row.model, row.provider_name, row.requests, row.usage, row.prompt_tokens, row.reasoning_tokens]),
    )
    const mine = await client.analytics.getUserActivity({ date: '2026-11-21' })
    expect(mine.data.map((item) => [item.model, item.requests])).toEqual(
      (await activity(a, `?date=2026-11-21&api_key_hash=${customer.record.hash}`)).body.data.map((row) => [row.model, row.requests]),
    )
    const credits = await client.credits.getCredits()
    const admin = await a.gateway.admin.getCredits(customer.user.org_id)
    expect(credits.data).toEqual({ totalCredits: Number(admin.total_credits), totalUsage: Number(admin.total_usage) })
  })

  it(`the sweep removes rollups once their day is past the retention, and nothing newer`, async () => {
    const ctx = a.gateway.context
    const org = customer.user.org_id
    const rollupKeys = async (day: string) => (await a.gateway.internals.storage.getKeys('gateway:rollups:')).filter((key) => key.includes(`:${day}:`))
    expect((await ctx.rollups.day(org, '2026-11-20')).length).toBeGreaterThan(0)
    const day2 = await ctx.rollups.day(org, '2026-11-21')

    // 90 days after the first day ended, it is past the retention; the second day is not yet.
    now = Date.parse('2026-11-21T00:00:00.000Z') + 90 * DAY
    const removed = await a.gateway.admin.sweep()
    expect(removed.usage_rollups).toBeGreaterThan(0)
    expect(await rollupKeys('2026-11-20')).toEqual([])
    expect(await ctx.rollups.day(org, '2026-11-20')).toEqual([])
    expect(await ctx.rollups.day(org, '2026-11-21')).toEqual(day2)

    now += DAY
    expect((await a.gateway.admin.sweep()).usage_rollups).toBeGreaterThan(0)
    expect(await rollupKeys('2026-11-21')).toEqual([])
    expect(await ctx.usage.list(org)).toEqual([]) // the usage records went too (the same retention)
  })
}

describe('GET /api/v1/activity: memory (two instances on one storage)', () => describeActivity(memoryKind))
describe('GET /api/v1/activity: fs (two instances in one process over one folder)', () => describeActivity(fsKind))
describe.skipIf(!process.env.REDIS_URL)('GET /api/v1/activity: redis (REDIS_URL; two instances)', () =>
  describeActivity(() => redisKind(process.env.REDIS_URL!)),
)
