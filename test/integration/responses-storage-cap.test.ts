/**
 * The cap on an org's stored responses (docs/responses.md#stored-responses, `retention.responsesBytesPerOrg`): two
 * gateway instances over one storage (memory, files, Redis, PostgreSQL) take concurrent POST /responses over real HTTP; the
 * requests that would store past the cap are refused with a 400 in OpenAI's shape before any provider is called,
 * `store: false` never is, the count is exactly the stored records' bytes, and a DELETE, the retention, a request that
 * stores nothing (failed, cut, refused for credits, translated or native) and the default in-memory storage's bound
 * each free their room.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Storage } from 'unstorage'
import { openai } from '../../src/providers/openai'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import type { GatewayOptions } from '../../src/index'
import { listKeys } from '../../src/stores/list-keys'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { eventually } from '../helpers/eventually'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { fsKind, memoryKind, postgresKind, redisKind, type StorageKind } from '../helpers/storages'

const PRICING = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
/** Base64 characters of each request's image: its conversation is about 100 kB. */
const IMAGE_CHARS = 100_000
/** Three conversations fit (each stored record is a little over 100 kB), a fourth does not. */
const CAP = 350_000
/** The JSON bytes of a conversation of one user message: `Keep <n>` and the image (as the gateway stores it, before ids). */
const CONVERSATION_MIN = IMAGE_CHARS

let fake: FakeOpenAI
beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-upstream', slowMs: 150 })
})
afterAll(async () => {
  await fake?.close()
})

/** Providers over the fake: `fake/*` served by translation to chat, `native/*` by the fake's own Responses API. */
const providers = () => [
  openaiCompatible({
    slug: 'fake',
    name: 'Fake',
    baseURL: fake.url,
    apiKey: 'sk-upstream',
    models: ['gpt-test', 'fail-500', 'fail-midstream', 'slow'].map((id) => ({ id: `fake/${id}`, upstreamId: id, pricing: PRICING, maxCompletionTokens: 1000 })),
  }),
  openai({
    apiKey: 'sk-upstream',
    baseURL: fake.url,
    models: ['gpt-test', 'fail-500', 'fail-midstream', 'slow'].map((id) => ({
      id: `native/${id}`,
      upstreamId: id,
      pricing: PRICING,
      maxCompletionTokens: 1000,
    })),
  }),
]

/** A Responses input of one user message: its text, and an image of IMAGE_CHARS base64 characters. */
const imageInput = (text: string) => [
  {
    role: 'user',
    content: [
      { type: 'input_text', text },
      { type: 'input_image', image_url: `data:image/png;base64,${'A'.repeat(IMAGE_CHARS)}` },
    ],
  },
]
const upstreamCalls = () => fake.requests.filter((r) => r.path === '/v1/chat/completions' || r.path === '/v1/responses').length

/** Two gateway instances over one storage kind (one clock), and what the tests need of them. */
function describeCap(makeKind: () => StorageKind) {
  let kind: StorageKind
  let instances: TestGateway[]
  let observer: Storage
  let now = Date.UTC(2026, 5, 1, 9, 30, 0)
  const options = (): GatewayOptions => ({
    storage: kind.open(),
    providers: providers(),
    clock: () => now,
    retry: { maxRetries: 0 },
    abortedStreamUsageWaitMs: 0,
    retention: { sweepIntervalSeconds: 0, responsesBytesPerOrg: CAP },
  })
  beforeAll(async () => {
    kind = makeKind()
    instances = [await startGateway(options()), await startGateway(options())]
    observer = kind.open()
  })
  afterAll(async () => {
    await Promise.all((instances ?? []).map((t) => t.close()))
    await kind?.cleanup()
  })

  const customer = (credits = '50') => createCustomer(instances[0].gateway, { credits })
  const post = (i: number, auth: Record<string, string>, body: Record<string, unknown>, init: RequestInit = {}) =>
    instances[i % 2].request('/api/v1/responses', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake/gpt-test', ...body }),
      ...init,
    })
  const used = (org: string) => instances[1].gateway.context.responses.usedBytes(org)
  /** The org's stored records as the storage holds them, by response id. */
  const records = async (org: string): Promise<Map<string, any>> => {
    const base = `gateway:responses:${org}:`
    const keys = await listKeys(observer, base)
    const entries = await Promise.all(keys.map(async (key) => [key.slice(key.lastIndexOf(':') + 1), await observer.getItem(key)] as const))
    return new Map(entries)
  }
  /** Each record's `bytes` is its own JSON size without that field; returns their sum. */
  const storedBytes = async (org: string): Promise<number> => {
    let sum = 0
    for (const record of (await records(org)).values()) {
      const { bytes, ...rest } = record
      expect(bytes).toBe(Buffer.byteLength(JSON.stringify(rest)))
      sum += bytes
    }
    return sum
  }
  /** Fills the org up to the cap with three stored responses (one at a time); returns their ids. */
  const fill = async (auth: Record<string, string>) => {
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const res = await post(i, auth, { input: imageInput(`Keep ${i}`) })
      expect(res.status).toBe(200)
      ids.push(((await res.json()) as { id: string }).id)
    }
    return ids
  }
  const expectRefused = async (res: Response, org: string) => {
    expect(res.status).toBe(400)
    const { error } = (await res.json()) as any
    expect(error).toMatchObject({ type: 'invalid_request_error', param: 'store', code: 'invalid_request' })
    expect(error.message).toContain(`past their cap of ${CAP} bytes`)
    expect(error.message).toContain('store: false')
    expect(error.message).toContain('DELETE /responses/{id}')
    expect(error.message).toContain('retention.responsesBytesPerOrg')
    expect(error.metadata.max_stored_bytes).toBe(CAP)
    expect(error.metadata.request_bytes).toBeGreaterThan(CONVERSATION_MIN)
    expect(error.metadata.stored_bytes + error.metadata.request_bytes).toBeGreaterThan(CAP)
    expect(error.metadata.stored_bytes).toBeLessThanOrEqual(await used(org))
  }

  it('ten concurrent stores on two instances: exactly three fit under the cap, the rest are refused before any provider is called', async () => {
    const c = await customer()
    const before = upstreamCalls()
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => post(i, c.auth, { input: imageInput(`Race ${i}`), stream: i % 3 === 0 })))
    const statuses = answers.map((res) => res.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(3)
    expect(statuses.filter((s) => s === 400)).toHaveLength(7)
    for (const res of answers) {
      if (res.status === 400) await expectRefused(res, c.user.org_id)
      else await res.text()
    }
    expect(upstreamCalls() - before).toBe(3)
    expect((await records(c.user.org_id)).size).toBe(3)
    const stored = await storedBytes(c.user.org_id)
    expect(stored).toBeGreaterThan(3 * CONVERSATION_MIN)
    expect(stored).toBeLessThanOrEqual(CAP)
    expect(await used(c.user.org_id)).toBe(stored)
    // Another org has its own cap.
    const other = await customer()
    expect((await post(0, other.auth, { input: imageInput('Mine') })).status).toBe(200)
  })

  it('store: false is never refused by it; a DELETE frees the room at once, and of two concurrent DELETEs one counts', async () => {
    const c = await customer()
    const ids = await fill(c.auth)
    const full = await used(c.user.org_id)
    await expectRefused(await post(0, c.auth, { input: imageInput('One more') }), c.user.org_id)
    const unstored = await post(1, c.auth, { input: imageInput('Not kept'), store: false })
    expect(unstored.status).toBe(200)
    expect(((await unstored.json()) as any).store).toBe(false)
    expect(await used(c.user.org_id)).toBe(full)

    const record = (await records(c.user.org_id)).get(ids[0])
    const deletes = await Promise.all([0, 1].map((i) => instances[i].request(`/api/v1/responses/${ids[0]}`, { method: 'DELETE', headers: c.auth })))
    expect(deletes.map((res) => res.status).sort()).toEqual([200, 404])
    expect(await used(c.user.org_id)).toBe(full - record.bytes)
    expect(await used(c.user.org_id)).toBe(await storedBytes(c.user.org_id))
    expect((await post(1, c.auth, { input: imageInput('In its place') })).status).toBe(200)
    await expectRefused(await post(0, c.auth, { input: imageInput('Still full') }), c.user.org_id)
    expect(await used(c.user.org_id)).toBe(await storedBytes(c.user.org_id))
  })

  it('a response past its retention no longer counts (within the hour it expires in)', async () => {
    const c = await customer()
    await fill(c.auth)
    await expectRefused(await post(0, c.auth, { input: imageInput('Full') }), c.user.org_id)
    now += 30 * DAY_MS
    await expectRefused(await post(1, c.auth, { input: imageInput('Not yet') }), c.user.org_id)
    now += HOUR_MS
    expect(await used(c.user.org_id)).toBe(0)
    expect((await post(0, c.auth, { input: imageInput('Room again') })).status).toBe(200)
  })

  it('a request that stores nothing gives its room back: failed, cut mid-stream, left by its client, refused for credits; translated and native', async () => {
    const c = await customer()
    const ids = await fill(c.auth)
    // Room for exactly one more conversation.
    const [first] = ids
    expect((await instances[0].request(`/api/v1/responses/${first}`, { method: 'DELETE', headers: c.auth })).status).toBe(200)
    const room = await used(c.user.org_id)
    const fits = () => post(0, c.auth, { input: imageInput('Fits') })
    for (const prefix of ['fake', 'native']) {
      const failed = await post(1, c.auth, { model: `${prefix}/fail-500`, input: imageInput('Fails') })
      expect(failed.status).toBe(502)
      await failed.text()
      expect(await used(c.user.org_id), `${prefix} failed`).toBe(room)

      const cut = await post(0, c.auth, { model: `${prefix}/fail-midstream`, input: imageInput('Cut'), stream: true })
      expect(cut.status).toBe(200)
      expect(await cut.text()).toContain('response.failed')
      expect(
        await eventually(
          () => used(c.user.org_id),
          (n) => n === room,
        ),
        `${prefix} cut`,
      ).toBe(room)

      const left = new AbortController()
      const leaving = await post(1, c.auth, { model: `${prefix}/slow`, input: imageInput('Left'), stream: true }, { signal: left.signal })
      expect(leaving.status).toBe(200)
      const reader = leaving.body!.getReader()
      await reader.read()
      left.abort()
      await reader.read().catch(() => undefined)
      expect(
        await eventually(
          () => used(c.user.org_id),
          (n) => n === room,
        ),
        `${prefix} left`,
      ).toBe(room)
    }
    const poor = await createCustomer(instances[0].gateway)
    const refused = await post(0, poor.auth, { input: imageInput('No credits') })
    expect(refused.status).toBe(402)
    expect(await used(poor.user.org_id)).toBe(0)

    const stored = await fits()
    expect(stored.status).toBe(200)
    expect(await used(c.user.org_id)).toBe(await storedBytes(c.user.org_id))
  })

  it('room held by a request whose process died stops counting after holdTtlSeconds (rounded up to the hour)', async () => {
    const c = await customer()
    const ctx = instances[0].gateway.context
    const held = await ctx.responses.hold(c.user.org_id, CAP)
    expect('held' in held).toBe(true)
    await expectRefused(await post(1, c.auth, { input: imageInput('Held') }), c.user.org_id)
    now += 900_000 + HOUR_MS
    expect((await post(1, c.auth, { input: imageInput('Freed') })).status).toBe(200)
  })
}

describe('stored responses cap: memory', () => describeCap(memoryKind))
describe('stored responses cap: fs', () => describeCap(fsKind))
describe.skipIf(!process.env.REDIS_URL)('stored responses cap: redis (REDIS_URL)', () => describeCap(() => redisKind(process.env.REDIS_URL!)))
describe.skipIf(!process.env.DATABASE_URL)('stored responses cap: postgres (DATABASE_URL)', () => describeCap(() => postgresKind(process.env.DATABASE_URL!)))

describe('stored responses in the default in-memory storage', () => {
  it('count in retention.inMemoryRecords: the oldest go first, and no longer count against the cap', async () => {
    const t = await startGateway({ providers: providers(), retention: { inMemoryRecords: 3, responsesBytesPerOrg: 10 * CAP } })
    try {
      const c = await createCustomer(t.gateway, { credits: '50' })
      const ids: string[] = []
      for (let i = 0; i < 5; i++) {
        const res = await t.request('/api/v1/responses', {
          method: 'POST',
          headers: { ...c.auth, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'fake/gpt-test', input: imageInput(`Kept ${i}`) }),
        })
        expect(res.status).toBe(200)
        ids.push(((await res.json()) as { id: string }).id)
      }
      const statuses = await Promise.all(ids.map(async (id) => (await t.request(`/api/v1/responses/${id}`, { headers: c.auth })).status))
      expect(statuses).toEqual([404, 404, 200, 200, 200])
      const keys = await t.gateway.internals.storage.getKeys(`gateway:responses:${c.user.org_id}`)
      expect(keys.map((key) => key.slice(key.lastIndexOf(':') + 1)).sort()).toEqual(ids.slice(2).sort())
      let sum = 0
      for (const key of keys) sum += ((await t.gateway.internals.storage.getItem(key)) as { bytes: number }).bytes
      expect(
        await eventually(
          () => t.gateway.context.responses.usedBytes(c.user.org_id),
          (n) => n === sum,
        ),
      ).toBe(sum)
    } finally {
      await t.close()
    }
  })
})

describe('retention.responsesBytesPerOrg', () => {
  it('is 100 MiB by default; 0 turns the cap off; anything but a whole number of bytes is refused', async () => {
    const t = await startGateway({ providers: providers() })
    try {
      expect(t.gateway.context.responses.maxBytesPerOrg).toBe(100 * 1024 * 1024)
    } finally {
      await t.close()
    }
    const off = await startGateway({ providers: providers(), retention: { responsesBytesPerOrg: 0 } })
    try {
      const c = await createCustomer(off.gateway, { credits: '50' })
      for (let i = 0; i < 4; i++) {
        const res = await off.request('/api/v1/responses', {
          method: 'POST',
          headers: { ...c.auth, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'fake/gpt-test', input: imageInput(`Uncapped ${i}`) }),
        })
        expect(res.status).toBe(200)
      }
      expect(await off.gateway.context.responses.usedBytes(c.user.org_id)).toBeGreaterThan(4 * CONVERSATION_MIN)
    } finally {
      await off.close()
    }
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])
      await expect(startGateway({ retention: { responsesBytesPerOrg: bad } })).rejects.toThrow(/retention.responsesBytesPerOrg/)
  })
})
