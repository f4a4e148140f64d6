import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible, type ProviderModel } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { eventually } from '../helpers/eventually'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { memoryKind, postgresKind, redisKind, type StorageKind } from '../helpers/storages'

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const json = { 'content-type': 'application/json' }

/**
 * The built-in rules on two gateway instances over one storage (docs/policies.md#built-in-rules): a rule set on one is
 * applied by the other within the authentication cache's epoch poll, and concurrent changes of different rules, on
 * both instances and through both the admin API and PATCH /keys, never undo one another.
 */
function describeInstances(makeKind: () => StorageKind) {
  let kind: StorageKind
  let upstream: FakeOpenAI
  let a: TestGateway
  let b: TestGateway
  const models: ProviderModel[] = ['gpt-test', 'other'].map((id) => ({ id: `fake/${id}`, upstreamId: 'gpt-test', pricing }))
  const options = () => ({
    storage: kind.open(),
    authCache: { epochPollMs: 50 },
    providers: [openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models })],
  })

  beforeAll(async () => {
    kind = makeKind()
    upstream = await startFakeOpenAI({ apiKey: 'sk-up' })
    a = await startGateway(options())
    b = await startGateway(options())
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    await upstream?.close()
    await kind?.cleanup()
  })

  const chat = async (g: TestGateway, key: string, model: string) => {
    const res = await g.request('/api/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, ...json },
      body: JSON.stringify({ model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    })
    const body = await res.json()
    return { status: res.status, reason: body.error?.metadata?.reason as string | undefined }
  }

  it('a rule set on one instance applies on the other (whose cache held the key) within the epoch poll', async () => {
    const c = await createCustomer(a.gateway, { credits: '5' })
    expect((await chat(b, c.key, 'fake/gpt-test')).status).toBe(200)
    await a.gateway.admin.setOrgRules(c.user.org_id, { allowed_models: ['fake/other'] })
    const refused = await eventually(
      () => chat(b, c.key, 'fake/gpt-test'),
      (r) => r.status !== 200,
    )
    expect(refused).toEqual({ status: 403, reason: 'model_not_allowed' })
    expect((await chat(b, c.key, 'fake/other')).status).toBe(200)
    await b.gateway.admin.setKeyRules(c.record.hash, { allowed_providers: ['elsewhere'] })
    const none = await eventually(
      () => chat(a, c.key, 'fake/other'),
      (r) => r.status !== 200,
    )
    expect(none).toEqual({ status: 403, reason: 'provider_not_allowed' })
  })

  it('concurrent changes of different rules on both instances all land', async () => {
    const c = await createCustomer(a.gateway, { credits: '5' })
    const manager = await a.gateway.admin.issueKey({ userId: c.user.id, management: true })
    const ROUNDS = 8
    await Promise.all(
      Array.from({ length: ROUNDS }, (_, i) => [
        a.gateway.admin.setKeyRules(c.record.hash, { allowed_models: [`fake/model-${i}`, 'fake/gpt-test'] }),
        b.gateway.admin.setKeyRules(c.record.hash, { max_price: { prompt: String(i + 1) } }),
        (i % 2 ? a : b).request(`/api/v1/keys/${c.record.hash}`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${manager.key}`, ...json },
          body: JSON.stringify(i === ROUNDS - 1 ? { enforce_zdr: true, name: 'last' } : { name: `round ${i}` }),
        }),
      ]).flat(),
    )
    const record = (await b.gateway.context.accounts.getKey(c.record.hash))!
    expect(record.rules?.allowed_models).toHaveLength(2)
    expect(record.rules?.allowed_models?.[1]).toBe('fake/gpt-test')
    expect(record.rules?.max_price?.prompt).toMatch(/^[1-8]$/)
    expect(record.rules?.enforce_zdr).toBe(true)
    expect(record.rev).toBe(ROUNDS * 3)
  })
}

describe('built-in rules on two instances: memory', () => describeInstances(memoryKind))
describe.skipIf(!process.env.REDIS_URL)('built-in rules on two instances: redis (REDIS_URL)', () => describeInstances(() => redisKind(process.env.REDIS_URL!)))
describe.skipIf(!process.env.DATABASE_URL)('built-in rules on two instances: postgres (DATABASE_URL)', () =>
  describeInstances(() => postgresKind(process.env.DATABASE_URL!)),
)
