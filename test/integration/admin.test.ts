import { createStorage } from 'unstorage'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { demo, GatewayError } from '../../src/index'
import { fromUnits, toUnits } from '../../src/billing/money'
import { startGateway, type TestGateway } from '../helpers/server'

describe('admin.issueKey credit limits', () => {
  let t: TestGateway
  let userId: string
  beforeAll(async () => {
    t = await startGateway({ providers: [demo()] })
    const user = await t.gateway.admin.createUser({ email: 'limits@example.com' })
    await t.gateway.admin.addCredits(user.org_id, '5')
    userId = user.id
  })
  afterAll(() => t.close())

  const chat = (key: string) =>
    t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'hi' }] }),
    })

  it('stores a positive exact decimal, string or number, written canonically; null or nothing for no limit', async () => {
    const cases: [string | number | null | undefined, string | null][] = [
      ['10.50', '10.5'],
      [' 3 ', '3'],
      [2.5, '2.5'],
      [0.1, '0.1'],
      ['0.000000000001', '0.000000000001'],
      [1e3, '1000'],
      [null, null],
      [undefined, null],
    ]
    for (const [creditLimit, stored] of cases) {
      const { record } = await t.gateway.admin.issueKey({ userId, creditLimit })
      expect(record.credit_limit, String(creditLimit)).toBe(stored)
    }
    const { key } = await t.gateway.admin.issueKey({ userId, creditLimit: '10.50' })
    expect((await chat(key)).status).toBe(200)
  })

  it('refuses 0, negatives, exponents, text and more than 12 fractional digits with a 400 naming creditLimit', async () => {
    const before = (await t.gateway.admin.listKeys(userId)).length
    for (const creditLimit of [0, '0', '0.000', -1, '-2.5', 'abc', '1e3', '', '1.0000000000001', Number.NaN, Number.POSITIVE_INFINITY, true, {}]) {
      const attempt = t.gateway.admin.issueKey({ userId, creditLimit: creditLimit as never })
      await expect(attempt, String(creditLimit)).rejects.toBeInstanceOf(GatewayError)
      await attempt.catch((error: GatewayError) => {
        expect(error.status).toBe(400)
        expect(error.param).toBe('creditLimit')
        expect(error.message).toMatch(/^creditLimit: /)
      })
    }
    expect(await t.gateway.admin.listKeys(userId)).toHaveLength(before)
  })
})

// The ledger is the org's audit trail, kept for ever (docs/money.md): every grant and every charge, requests included.
describe('admin.ledger and admin.usage after requests', () => {
  let t: TestGateway
  let now = Date.parse('2026-11-26T09:00:00.000Z')
  let orgId: string
  let auth: Record<string, string>
  beforeAll(async () => {
    t = await startGateway({ providers: [demo({ audio: true })], clock: () => now })
    const user = await t.gateway.admin.createUser({ email: 'audit@example.com' })
    orgId = user.org_id
    await t.gateway.admin.addCredits(orgId, '5', 'welcome')
    auth = { authorization: `Bearer ${(await t.gateway.admin.issueKey({ userId: user.id })).key}`, 'content-type': 'application/json' }
  })
  afterAll(() => t.close())

  const chat = async (content: string, stream = false) => {
    const res = await t.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content }], stream }),
    })
    expect(res.status).toBe(200)
    const id = res.headers.get('x-generation-id')!
    await res.text()
    return id
  }

  it('has an entry per charged request (chat whole and streamed, speech) with its generation id, time and exact amount; usage reads the records', async () => {
    const first = await chat('Hello ledger')
    now += 1000
    const second = await chat('A streamed hello', true)
    now += 1000
    const speech = await t.request('/api/v1/audio/speech', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ model: 'demo/speech', input: 'Hi there', response_format: 'wav' }),
    })
    expect(speech.status).toBe(200)
    const third = speech.headers.get('x-generation-id')!
    await speech.arrayBuffer()
    now += 1000
    await t.gateway.admin.chargeCredits(orgId, '0.25', 'support fee')

    // The usage records, oldest first, with what each request used and cost: 6 prompt tokens at 0.0000001 USD and 3
    // completion tokens at 0.0000002 USD make 0.0000012 USD, at 0.86 EUR per USD 0.000001032 EUR.
    const usage = await t.gateway.admin.usage(orgId)
    expect(usage.map((r) => r.id)).toEqual([first, second, third])
    expect(usage[0]).toMatchObject({
      org_id: orgId,
      endpoint: 'chat',
      model: 'demo/echo',
      provider: 'demo',
      stream: false,
      status: 'success',
      prompt_tokens: 6,
      completion_tokens: 3,
      currency: 'USD',
      cost: '0.0000012',
      cost_eur: '0.000001032',
      is_byok: false,
      created_at: '2026-11-26T09:00:00.000Z',
    })
    expect(usage[1]).toMatchObject({ endpoint: 'chat', stream: true, created_at: '2026-11-26T09:00:01.000Z' })
    expect(usage[2]).toMatchObject({ endpoint: 'speech', model: 'demo/speech', characters: 8, cost: '0.00012', cost_eur: '0.0001032', billed_by: 'characters' })

    // The ledger: the grant, one charge per request (its generation id and cost_eur), the admin charge.
    const ledger = await t.gateway.admin.ledger(orgId)
    expect(ledger.map(({ kind, amount, note, at, generation_id }) => ({ kind, amount, note, at, generation_id }))).toEqual([
      { kind: 'grant', amount: '5', note: 'welcome', at: '2026-11-26T09:00:00.000Z', generation_id: undefined },
      { kind: 'charge', amount: usage[0].cost_eur, note: 'chat demo/echo', at: '2026-11-26T09:00:00.000Z', generation_id: first },
      { kind: 'charge', amount: usage[1].cost_eur, note: 'chat demo/echo', at: '2026-11-26T09:00:01.000Z', generation_id: second },
      { kind: 'charge', amount: '0.0001032', note: 'speech demo/speech', at: '2026-11-26T09:00:02.000Z', generation_id: third },
      { kind: 'charge', amount: '0.25', note: 'support fee', at: '2026-11-26T09:00:03.000Z', generation_id: undefined },
    ])
    expect(ledger.every((e) => e.org_id === orgId)).toBe(true)

    // Its grants add up to total_credits and its charges to total_usage, exactly.
    const sum = (kind: string) => fromUnits(ledger.filter((e) => e.kind === kind).reduce((total, e) => total + toUnits(e.amount), 0n))
    const credits = await t.gateway.admin.getCredits(orgId)
    expect(sum('grant')).toBe(credits.total_credits)
    expect(sum('charge')).toBe(credits.total_usage)
    expect(fromUnits(usage.reduce((total, r) => total + toUnits(r.cost_eur), 0n) + toUnits('0.25'))).toBe(credits.total_usage)
  })

  it('reads pages: limit, after (the last id), order, since and until', async () => {
    const all = await t.gateway.admin.usage(orgId)
    const ids = all.map((r) => r.id)
    expect((await t.gateway.admin.usage(orgId, { limit: 2 })).map((r) => r.id)).toEqual(ids.slice(0, 2))
    expect((await t.gateway.admin.usage(orgId, { limit: 2, after: ids[1] })).map((r) => r.id)).toEqual(ids.slice(2))
    expect((await t.gateway.admin.usage(orgId, { order: 'desc', limit: 1 })).map((r) => r.id)).toEqual([ids[2]])
    expect((await t.gateway.admin.usage(orgId, { order: 'desc', after: ids[2] })).map((r) => r.id)).toEqual([ids[1], ids[0]])
    expect((await t.gateway.admin.usage(orgId, { since: '2026-11-26T09:00:01Z' })).map((r) => r.id)).toEqual(ids.slice(1))
    expect(
      (await t.gateway.admin.usage(orgId, { since: new Date('2026-11-26T09:00:01Z'), until: Date.parse('2026-11-26T09:00:02Z') })).map((r) => r.id),
    ).toEqual([ids[1]])
    expect(await t.gateway.admin.usage('no-such-org')).toEqual([])

    const ledger = await t.gateway.admin.ledger(orgId)
    expect(await t.gateway.admin.ledger(orgId, { order: 'desc', limit: 2 })).toEqual([ledger[4], ledger[3]])
    expect(await t.gateway.admin.ledger(orgId, { after: ledger[2].id, limit: 1 })).toEqual([ledger[3]])
    expect(await t.gateway.admin.ledger(orgId, { since: '2026-11-26T09:00:02Z' })).toEqual(ledger.slice(3))

    for (const [options, param] of [
      [{ limit: 0 }, 'limit'],
      [{ limit: 1001 }, 'limit'],
      [{ limit: 2.5 }, 'limit'],
      [{ since: 'yesterday' }, 'since'],
      [{ until: Number.NaN }, 'until'],
      [{ order: 'newest' }, 'order'],
      [{ after: 'gen-unknown' }, 'after'],
    ] as const) {
      await expect(t.gateway.admin.usage(orgId, options as never), JSON.stringify(options)).rejects.toMatchObject({ status: 400, param })
    }
    await expect(t.gateway.admin.ledger(orgId, { after: 'nope' })).rejects.toMatchObject({ status: 400, param: 'after' })
  })
})

describe('a ledger entry that cannot be written', () => {
  it('leaves the charge exact and logs the entry to add by hand', async () => {
    const storage = createStorage()
    const setItem = storage.setItem.bind(storage)
    storage.setItem = (async (key: string, value: never, options?: never) => {
      if (key.startsWith('gateway:ledger:') && (value as { kind?: string }).kind === 'charge') throw new Error('disk full')
      return setItem(key, value, options)
    }) as typeof storage.setItem
    const errors: [string, Record<string, unknown> | undefined][] = []
    const logger = { debug() {}, info() {}, warn() {}, error: (message: string, fields?: Record<string, unknown>) => void errors.push([message, fields]) }
    const t = await startGateway({ providers: [demo()], storage, logger })
    try {
      const user = await t.gateway.admin.createUser({ email: 'full@example.com' })
      await t.gateway.admin.addCredits(user.org_id, '1')
      const { key } = await t.gateway.admin.issueKey({ userId: user.id })
      const res = await t.request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo/echo', messages: [{ role: 'user', content: 'Hello ledger' }] }),
      })
      expect(res.status).toBe(200)
      const id = res.headers.get('x-generation-id')
      await res.text()
      expect(await t.gateway.admin.getCredits(user.org_id)).toEqual({ balance: '0.999998968', total_credits: '1', total_usage: '0.000001032' })
      expect((await t.gateway.admin.ledger(user.org_id)).map((e) => e.kind)).toEqual(['grant'])
      expect(errors).toEqual([
        [
          'a request was charged but its ledger entry or usage record could not be written: add it by hand',
          expect.objectContaining({ org_id: user.org_id, amount: '0.000001032', note: 'chat demo/echo', generation_id: id, error: 'disk full' }),
        ],
      ])
    } finally {
      await t.close()
      await storage.dispose()
    }
  })
})
