import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible, type ProviderModel } from '../../src/index'
import { fromUnits, toUnits } from '../../src/billing/money'
import { createRollupStore } from '../../src/stores/rollups'
import type { UsageRecord } from '../../src/stores/usage'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'
import { memoryKind, postgresKind, redisKind, type StorageKind } from '../helpers/storages'

// Usage per user and per end user (docs/usage.md#usage-per-user-and-per-end-user): two users of one org and their end
// users make chat and embeddings requests at once on two gateway instances sharing one storage; GET /activity grouped
// by user and by end user, and admin.activity, give exact totals that add up to the ungrouped ones and to the credits.

const DAY1 = Date.parse('2026-11-20T10:00:00.000Z')
const DAY2 = Date.parse('2026-11-21T09:00:00.000Z')
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const models: ProviderModel[] = [
  { id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing, maxCompletionTokens: 100 },
  {
    id: 'fake/embed',
    upstreamId: 'emb-test',
    pricing: { prompt: '0.000001', completion: '0', currency: 'USD' },
    endpoints: ['/embeddings'],
    embedding: { dimensions: 8 },
  },
]
const json = { 'content-type': 'application/json' }
const MESSAGES = [{ role: 'user', content: 'count me' }]
// The fake counts the messages' JSON (38 characters) as 10 prompt tokens and answers `Hello from gpt-test: count me`
// (5 completion tokens): 10 × 0.000001 + 5 × 0.000002 = 0.00002 USD, 0.0000172 EUR at 0.86. An embedding of 100
// characters is 25 tokens: 0.000025 USD, 0.0000215 EUR.
const CHAT = { prompt: 10, completion: 5, eur: toUnits('0.0000172') }
const EMBED = { prompt: 25, completion: 0, eur: toUnits('0.0000215') }
const END_USERS_PER_DAY = 3

interface Row {
  date: string
  model: string
  provider: string
  usage: number
  requests: number
  prompt_tokens: number
  completion_tokens: number
  user_id?: string | null
  end_user?: string | null
  api_key_hash?: string | null
}
interface Sums {
  requests: number
  prompt: number
  completion: number
  eur: bigint
}
/** One planned request: who sends it (user index), for which end user, chat (whole or streamed) or embeddings. */
interface Planned {
  user: 0 | 1
  endUser?: string
  kind: 'chat' | 'stream' | 'embed'
}

/** The decimal text of each row's `usage`, exactly as sent, in the order of the rows. */
const rawUsages = (text: string) => [...text.matchAll(/"usage":(-?[0-9.]+)/g)].map((m) => m[1])

const emptySums = (): Sums => ({ requests: 0, prompt: 0, completion: 0, eur: 0n })
function add(sums: Sums, kind: Planned['kind']) {
  const unit = kind === 'embed' ? EMBED : CHAT
  sums.requests++
  sums.prompt += unit.prompt
  sums.completion += unit.completion
  sums.eur += unit.eur
}

/** Sums of planned requests by a key of each: what the gateway must report, computed from the plan alone. */
function expectedBy(plan: Planned[], keyOf: (p: Planned) => string) {
  const sums = new Map<string, Sums>()
  for (const p of plan) {
    const key = keyOf(p)
    if (!sums.has(key)) sums.set(key, emptySums())
    add(sums.get(key)!, p.kind)
  }
  return sums
}

/** The rows' sums by a key of each, with `usage` read from the response's exact decimal text. */
function sumsBy(rows: Row[], text: string, keyOf: (row: Row) => string) {
  const usages = rawUsages(text)
  expect(usages).toHaveLength(rows.length)
  const sums = new Map<string, Sums>()
  rows.forEach((row, i) => {
    const key = keyOf(row)
    const sum = sums.get(key) ?? emptySums()
    sum.requests += row.requests
    sum.prompt += row.prompt_tokens
    sum.completion += row.completion_tokens
    sum.eur += toUnits(usages[i])
    sums.set(key, sum)
  })
  return sums
}

function describePerUser(makeKind: () => StorageKind) {
  let kind: StorageKind
  let upstream: FakeOpenAI
  let a: TestGateway
  let b: TestGateway
  let now = DAY1
  let orgId: string
  // Two users of one org, each with a key; the org's management key reads the whole org.
  const users: { id: string; key: string; hash: string }[] = []
  let manager: { authorization: string }
  const plan: Planned[] = []

  beforeAll(async () => {
    kind = makeKind()
    upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
    const options = () => ({
      storage: kind.open(),
      clock: () => now,
      retention: { sweepIntervalSeconds: 0 },
      activity: { endUsersPerDay: END_USERS_PER_DAY },
      providers: [openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models })],
    })
    a = await startGateway(options())
    b = await startGateway(options())
    const alice = await createCustomer(a.gateway, { credits: '10' })
    orgId = alice.user.org_id
    const bob = await a.gateway.admin.createUser({ email: `bob-${Math.random().toString(36).slice(2)}@example.com`, orgId })
    const bobKey = await a.gateway.admin.issueKey({ userId: bob.id, label: 'bob' })
    users.push({ id: alice.user.id, key: alice.key, hash: alice.record.hash }, { id: bob.id, key: bobKey.key, hash: bobKey.record.hash })
    const managerKey = await a.gateway.admin.issueKey({ userId: alice.user.id, label: 'manager', management: true })
    manager = { authorization: `Bearer ${managerKey.key}` }
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    await upstream?.close()
    await kind?.cleanup()
  })

  // Sends a planned request on an instance; answers the generation id.
  const send = async (g: TestGateway, p: Planned): Promise<string> => {
    const headers = { authorization: `Bearer ${users[p.user].key}`, ...json }
    const user = p.endUser === undefined ? {} : { user: p.endUser }
    if (p.kind === 'embed') {
      const res = await g.request('/api/v1/embeddings', { method: 'POST', headers, body: JSON.stringify({ model: 'fake/embed', input: 'x'.repeat(100) }) })
      expect(res.status).toBe(200)
      return (await res.json()).id
    }
    const res = await g.request('/api/v1/chat/completions', {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'fake/gpt-test', messages: MESSAGES, stream: p.kind === 'stream', ...user }),
    })
    expect(res.status).toBe(200)
    if (p.kind === 'chat') return (await res.json()).id
    const { events } = await readSse(res)
    return events.find((e) => typeof e === 'object' && typeof e.id === 'string').id
  }
  const activity = async (g: TestGateway, query = '', who: { authorization: string } = manager) => {
    const res = await g.request(`/api/v1/activity${query}`, { headers: who })
    const text = await res.text()
    return { status: res.status, text, body: JSON.parse(text) as { data: Row[] } }
  }

  it('36 concurrent requests of two users and three end users on two instances: per user and per end user, exact, adding up to the totals', async () => {
    now = DAY1
    const endUsers = ['ann', 'ben', 'cat']
    for (let i = 0; i < 36; i++) {
      const kind: Planned['kind'] = i % 6 === 5 ? 'embed' : i % 3 === 1 ? 'stream' : 'chat'
      // Chat names an end user (all but every seventh request); embeddings requests name none.
      const endUser = kind !== 'embed' && i % 7 !== 0 ? endUsers[i % 3] : undefined
      plan.push({ user: (i % 4 < 2 ? 0 : 1) as 0 | 1, endUser, kind })
    }
    const ids = await Promise.all(plan.map((p, i) => send(i % 2 ? a : b, p)))
    expect(new Set(ids).size).toBe(36)

    // Ungrouped: per model and provider, the sum of every request.
    const all = await activity(a, '?date=2026-11-20')
    expect(all.status).toBe(200)
    const total = expectedBy(plan, () => 'all').get('all')!
    expect(sumsBy(all.body.data, all.text, () => 'all').get('all')).toEqual(total)
    expect(fromUnits(total.eur)).toBe((await a.gateway.admin.getCredits(orgId)).total_usage)
    expect(total).toEqual({ requests: 36, prompt: 30 * 10 + 6 * 25, completion: 30 * 5, eur: 30n * CHAT.eur + 6n * EMBED.eur })

    // Per user: a row per (model, provider, user), each user's sums exactly the plan's, together the total.
    const byUser = await activity(b, '?date=2026-11-20&group_by=user')
    expect(byUser.body.data).toHaveLength(4)
    const userSums = sumsBy(byUser.body.data, byUser.text, (row) => String(row.user_id))
    expect(userSums).toEqual(expectedBy(plan, (p) => users[p.user].id))
    expect(userSums.get(users[0].id)).toEqual({ requests: 18, prompt: 15 * 10 + 3 * 25, completion: 15 * 5, eur: 15n * CHAT.eur + 3n * EMBED.eur })
    expect(byUser.body.data.every((row) => row.end_user === undefined && row.api_key_hash === undefined)).toBe(true)

    // Per end user: ann, ben, cat and the requests without one (null, first of each model's rows).
    const byEndUser = await activity(a, '?date=2026-11-20&group_by=end_user')
    const endUserSums = sumsBy(byEndUser.body.data, byEndUser.text, (row) => String(row.end_user))
    expect(endUserSums).toEqual(expectedBy(plan, (p) => String(p.endUser ?? null)))
    expect([...endUserSums.keys()].sort()).toEqual(['ann', 'ben', 'cat', 'null'])
    expect(byEndUser.body.data.map((row) => `${row.model} ${row.end_user}`)).toEqual([
      'fake/embed null',
      'fake/gpt-test null',
      'fake/gpt-test ann',
      'fake/gpt-test ben',
      'fake/gpt-test cat',
    ])
    // ann's requests are chats only: 10 prompt and 5 completion tokens each.
    const ann = plan.filter((p) => p.endUser === 'ann')
    expect(endUserSums.get('ann')).toEqual({ requests: ann.length, prompt: ann.length * 10, completion: ann.length * 5, eur: BigInt(ann.length) * CHAT.eur })

    // Filters: one end user, one user, both; the same on either instance.
    const annRows = await activity(b, '?date=2026-11-20&end_user=ann')
    expect(sumsBy(annRows.body.data, annRows.text, () => 'ann').get('ann')).toEqual(endUserSums.get('ann'))
    const bobAnn = await activity(a, `?date=2026-11-20&end_user=ann&user_id=${users[1].id}`)
    expect(sumsBy(bobAnn.body.data, bobAnn.text, () => 'x').get('x')).toEqual(
      expectedBy(
        plan.filter((p) => p.user === 1 && p.endUser === 'ann'),
        () => 'x',
      ).get('x'),
    )
    const bobByEndUser = await activity(b, `?date=2026-11-20&group_by=end_user&user_id=${users[1].id}`)
    expect(sumsBy(bobByEndUser.body.data, bobByEndUser.text, (row) => String(row.end_user))).toEqual(
      expectedBy(
        plan.filter((p) => p.user === 1),
        (p) => String(p.endUser ?? null),
      ),
    )
    expect((await activity(a, '?end_user=nobody')).body.data).toEqual([])

    // Every usage record carries its user, end user and how its caller authenticated; the per-user sums are theirs.
    const records = await a.gateway.admin.usage(orgId, { limit: 1000 })
    expect(records).toHaveLength(36)
    for (const record of records) {
      const p = plan[ids.indexOf(record.id)]
      expect(record).toMatchObject({ user_id: users[p.user].id, end_user: p.endUser ?? null, via: 'key', key_hash: users[p.user].hash })
    }
    expect(fromUnits(records.filter((r) => r.user_id === users[1].id).reduce((sum, r) => sum + toUnits(r.cost_eur), 0n))).toBe(
      fromUnits(userSums.get(users[1].id)!.eur),
    )
  })

  it('GET /generation shows the user, the end user and how the caller authenticated, beside OpenRouter’s fields', async () => {
    const withEndUser = await send(a, { user: 1, endUser: 'ben', kind: 'chat' })
    const without = await send(b, { user: 0, kind: 'embed' })
    plan.push({ user: 1, endUser: 'ben', kind: 'chat' }, { user: 0, kind: 'embed' })
    const generation = async (id: string, key: string) => {
      const res = await b.request(`/api/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${key}` } })
      expect(res.status).toBe(200)
      return (await res.json()).data
    }
    expect(await generation(withEndUser, users[1].key)).toMatchObject({
      id: withEndUser,
      user_id: users[1].id,
      end_user: 'ben',
      external_user: 'ben',
      via: 'key',
      usage: 0.0000172,
      tokens_prompt: 10,
      tokens_completion: 5,
    })
    expect(await generation(without, users[0].key)).toMatchObject({ id: without, user_id: users[0].id, end_user: null, via: 'key', usage: 0.0000215 })
    // A `user` longer than 256 characters is refused (docs/first-party.md#end-users): nothing is served or recorded.
    const long = await a.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${users[0].key}`, ...json },
      body: JSON.stringify({ model: 'fake/gpt-test', messages: MESSAGES, user: 'u'.repeat(257) }),
    })
    expect(long.status).toBe(400)
    expect((await long.json()).error.param).toBe('user')
  })

  it('past the day’s bound, further end users count under "(other)", decided once across instances; the next day starts again', async () => {
    // ann, ben and cat have their rows today (the bound is 3): eight new end users at once on both instances all
    // count under "(other)", while their records keep their own names.
    const late = Array.from({ length: 8 }, (_, i): Planned => ({ user: (i % 2) as 0 | 1, endUser: `late-${i}`, kind: i % 2 ? 'stream' : 'chat' }))
    const lateIds = await Promise.all(late.map((p, i) => send(i % 2 ? a : b, p)))
    plan.push(...late)
    const byEndUser = await activity(a, '?date=2026-11-20&group_by=end_user')
    const sums = sumsBy(byEndUser.body.data, byEndUser.text, (row) => String(row.end_user))
    const named = (p: Planned) => (p.endUser === undefined ? 'null' : p.endUser.startsWith('late-') ? '(other)' : p.endUser)
    expect(sums).toEqual(expectedBy(plan, named))
    expect(sums.get('(other)')).toEqual({ requests: 8, prompt: 80, completion: 40, eur: 8n * CHAT.eur })
    const other = await activity(b, '?date=2026-11-20&end_user=(other)')
    expect(sumsBy(other.body.data, other.text, () => 'o').get('o')).toEqual(sums.get('(other)'))
    for (const id of lateIds) expect((await a.gateway.context.usage.get(orgId, id))?.end_user).toMatch(/^late-\d$/)
    // Per user, the late requests are each user's as before.
    const byUser = await activity(b, '?date=2026-11-20&group_by=user')
    expect(sumsBy(byUser.body.data, byUser.text, (row) => String(row.user_id))).toEqual(expectedBy(plan, (p) => users[p.user].id))

    // The next day, six new end users at once: exactly three get rows of their own, the other three count under "(other)".
    now = DAY2
    const next = Array.from({ length: 12 }, (_, i): Planned => ({ user: (i % 2) as 0 | 1, endUser: `day2-${i % 6}`, kind: 'chat' }))
    await Promise.all(next.map((p, i) => send(i % 2 ? a : b, p)))
    const day2 = await activity(a, '?date=2026-11-21&group_by=end_user')
    const rows = day2.body.data
    const own = rows.filter((row) => row.end_user !== '(other)')
    expect(own).toHaveLength(END_USERS_PER_DAY)
    for (const row of own) expect(row).toMatchObject({ requests: 2, prompt_tokens: 20, completion_tokens: 10 })
    expect(rows.find((row) => row.end_user === '(other)')).toMatchObject({ requests: 6, prompt_tokens: 60, completion_tokens: 30 })
    expect(sumsBy(rows, day2.text, () => 'all').get('all')).toEqual(expectedBy(next, () => 'all').get('all'))
    expect(await b.request('/api/v1/activity?date=2026-11-21&group_by=end_user', { headers: manager }).then((res) => res.text())).toBe(day2.text)
  })

  it('admin.activity gives the same rows over a date range, grouped by user and by end user, amounts as exact strings', async () => {
    for (const groupBy of ['user', 'end_user', 'api_key'] as const) {
      const rows = await a.gateway.admin.activity(orgId, { from: '2026-11-20', to: '2026-11-21', groupBy })
      const http = await activity(b, `?group_by=${groupBy}`)
      const field = ({ user: 'user_id', end_user: 'end_user', api_key: 'api_key_hash' } as const)[groupBy]
      expect(rows.length).toBeGreaterThan(0)
      expect(rows.every((row) => row[field] !== undefined)).toBe(true)
      expect(rows.map((row) => [row.date, row.model, row.provider, row[field], row.requests, row.prompt_tokens, row.completion_tokens, row.usage])).toEqual(
        http.body.data.map((row, i) => [
          row.date,
          row.model,
          row.provider,
          row[field],
          row.requests,
          row.prompt_tokens,
          row.completion_tokens,
          rawUsages(http.text)[i],
        ]),
      )
    }
    // Over both days, per user, they add up to what the credits were charged.
    const byUser = await b.gateway.admin.activity(orgId, { from: '2026-11-01', to: '2026-11-21', groupBy: 'user' })
    const total = byUser.reduce((sum, row) => sum + toUnits(row.usage), 0n)
    expect(fromUnits(total)).toBe((await a.gateway.admin.getCredits(orgId)).total_usage)
    const bobs = byUser.filter((row) => row.user_id === users[1].id)
    expect(bobs.reduce((n, row) => n + row.requests, 0)).toBe(plan.filter((p) => p.user === 1).length + 6)
    // Filters, and the default range (the last 30 days and today).
    expect(await a.gateway.admin.activity(orgId, { userId: users[0].id, endUser: 'ann', groupBy: 'end_user' })).toEqual(
      await a.gateway.admin.activity(orgId, { from: '2026-10-22', to: '2026-11-21', userId: users[0].id, endUser: 'ann', groupBy: 'end_user' }),
    )
    expect((await a.gateway.admin.activity(orgId, { to: '2026-11-20', endUser: 'day2-0' })).length).toBe(0)
    expect(await a.gateway.admin.activity('no-such-org')).toEqual([])
    // Bad options are 400s naming them.
    for (const [query, param] of [
      [{ from: '2026-11-31' }, 'from'],
      [{ to: 'today' }, 'to'],
      [{ from: '2026-11-21', to: '2026-11-20' }, 'from'],
      [{ from: '2026-01-01', to: '2026-11-21' }, 'from'],
      [{ groupBy: 'model' }, 'groupBy'],
      [{ endUser: '' }, 'endUser'],
    ] as const) {
      await expect(a.gateway.admin.activity(orgId, query as never)).rejects.toMatchObject({ status: 400, param })
    }
  })

  it('a day’s index stays bounded, and end users never crowd out the keys’ own entries', async () => {
    const { kv, atomic } = a.gateway.internals
    // One end user a day, and three entries of each kind with a key, so that each step of the bound shows.
    const bounds = { endUsersPerDay: 1, maxKeyedEntries: 3 }
    const store = createRollupStore({ kv, atomic, ...bounds })
    const org = `bounded-${Math.random().toString(36).slice(2)}`
    const names = { model_permaslug: 'fake/gpt-test', provider_name: 'Up' }
    const record = (i: number, key: string, endUser: string | null): UsageRecord => ({
      id: `gen-bounded-${i}`,
      org_id: org,
      user_id: `user-${key}`,
      end_user: endUser,
      via: 'key',
      key_hash: key,
      endpoint: 'chat',
      model: 'fake/gpt-test',
      provider: 'up',
      upstream_id: null,
      stream: false,
      status: 'success',
      prompt_tokens: 10 + i,
      completion_tokens: 5,
      cached_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
      usage_estimated: false,
      currency: 'USD',
      cost: '0.00002',
      cost_eur: '0.0000172',
      is_byok: false,
      upstream_inference_cost: '0.00002',
      latency_ms: 1,
      attempts: 1,
      created_at: '2026-11-20T12:00:00.000Z',
    })
    const steps: [string, string | null][] = [
      ['k1', null], // 0: k1's own entry (1 of 3 without an end user)
      ['k1', 'e1'], // 1: e1 is the day's one end user (1 of 3 with one)
      ['k1', 'e2'], // 2: past the end users: k1's "(other)" (2 of 3 without)
      ['k2', 'e1'], // 3: e1 again, for k2 (2 of 3 with)
      ['k3', 'e1'], // 4: (3 of 3 with)
      ['k4', 'e1'], // 5: no room with an end user: k4's "(other)" (3 of 3 without)
      ['k1', 'e3'], // 6: k1's "(other)", listed already
      ['k5', null], // 7: no room without an end user: without key, user or end user
      ['k5', 'e1'], // 8: no room with one, nor for k5's "(other)": the same
    ]
    for (const [i, [key, endUser]] of steps.entries()) await store.add(record(i, key, endUser), names)
    const rowsOf = async () =>
      (await store.day(org, '2026-11-20')).map(({ entry, totals }) => [entry.key_hash, entry.user_id, entry.end_user, totals.requests, totals.prompt_tokens])
    expect(await rowsOf()).toEqual([
      ['k1', 'user-k1', null, 1, 10],
      ['k1', 'user-k1', 'e1', 1, 11],
      ['k1', 'user-k1', '(other)', 2, 12 + 16],
      ['k2', 'user-k2', 'e1', 1, 13],
      ['k3', 'user-k3', 'e1', 1, 14],
      ['k4', 'user-k4', '(other)', 1, 15],
      [null, null, null, 2, 17 + 18],
    ])
    // Another instance's store decides the same from the stored index.
    const other = createRollupStore({ kv: b.gateway.internals.kv, atomic: b.gateway.internals.atomic, ...bounds })
    await other.add(record(9, 'k1', 'e1'), names)
    await other.add(record(10, 'k2', null), names)
    expect(await rowsOf()).toEqual([
      ['k1', 'user-k1', null, 1, 10],
      ['k1', 'user-k1', 'e1', 2, 11 + 19],
      ['k1', 'user-k1', '(other)', 2, 12 + 16],
      ['k2', 'user-k2', 'e1', 1, 13],
      ['k3', 'user-k3', 'e1', 1, 14],
      ['k4', 'user-k4', '(other)', 1, 15],
      [null, null, null, 3, 17 + 18 + 20],
    ])
  })

  it('an API key sees only its own key’s users and end users; bad queries are 400s', async () => {
    const bob = { authorization: `Bearer ${users[1].key}` }
    const own = await activity(a, '?group_by=end_user', bob)
    expect(own.status).toBe(200)
    expect(own.text).toBe((await activity(a, `?group_by=end_user&api_key_hash=${users[1].hash}`)).text)
    expect(new Set((await activity(b, '?group_by=user', bob)).body.data.map((row) => row.user_id))).toEqual(new Set([users[1].id]))
    expect((await activity(a, `?user_id=${users[0].id}`, bob)).body.data).toEqual([])
    for (const query of ['?group_by=model', `?end_user=${'x'.repeat(257)}`, '?end_user=']) {
      const refused = await activity(a, query)
      expect(refused.status).toBe(400)
      expect(refused.body).toMatchObject({ error: { type: 'invalid_request' } })
    }
  })
}

describe('usage per user and end user: memory (two instances on one storage)', () => describePerUser(memoryKind))
describe.skipIf(!process.env.REDIS_URL)('usage per user and end user: redis (REDIS_URL; two instances)', () =>
  describePerUser(() => redisKind(process.env.REDIS_URL!)),
)
describe.skipIf(!process.env.DATABASE_URL)('usage per user and end user: postgres (DATABASE_URL; two instances)', () =>
  describePerUser(() => postgresKind(process.env.DATABASE_URL!)),
)
