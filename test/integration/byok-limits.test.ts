import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway } from '../../src/index'
import { MAX_SECRET_BYTES } from '../../src/schemas/byok'
import { CUSTOMER_KEY, startByokPair, type ByokPair } from '../helpers/byok-pair'
import { TEST_SECRET } from '../helpers/server'
import { memoryKind, type StorageKind } from '../helpers/storages'

/** Bounds of BYOK credentials (docs/byok.md): how many an org may store, and how large each field may be. */
describe('BYOK limits', () => {
  let kind: StorageKind
  let pair: ByokPair
  beforeAll(async () => {
    kind = memoryKind()
    pair = await startByokPair(kind, { maxCredentials: 2 })
  })
  afterAll(async () => {
    await pair.close()
    await kind.cleanup()
  })

  it('refuses one credential more than byok.maxCredentials with a 400 naming the limit', async () => {
    const c = await pair.customer()
    for (const i of [0, 1]) expect((await pair.byok(i, c.auth, 'POST', '', { key: CUSTOMER_KEY, provider: 'alpha' })).status).toBe(201)
    const refused = await pair.byok(0, c.auth, 'POST', '', { key: CUSTOMER_KEY, provider: 'alpha' })
    expect(refused.status).toBe(400)
    expect((await refused.json()).error).toMatchObject({
      type: 'invalid_request',
      message: expect.stringContaining('at most 2 BYOK credentials'),
      metadata: { max_credentials: 2 },
    })
    // Another org has its own allowance.
    const d = await pair.customer()
    expect((await pair.byok(1, d.auth, 'POST', '', { key: CUSTOMER_KEY, provider: 'alpha' })).status).toBe(201)
  })

  it('bounds every field of a create and an update, naming the field', async () => {
    const c = await pair.customer()
    const okSecret = 'k'.repeat(MAX_SECRET_BYTES)
    const created = await pair.byok(0, c.auth, 'POST', '', { key: okSecret, provider: 'alpha' })
    expect(created.status).toBe(201)
    const { id } = (await created.json()).data
    const hash = 'a'.repeat(64)
    const cases: [string, Record<string, unknown>, string][] = [
      ['key', { key: 'k'.repeat(MAX_SECRET_BYTES + 1) }, 'key'],
      ['key of multi-byte characters', { key: 'é'.repeat(MAX_SECRET_BYTES / 2 + 1) }, 'key'],
      ['name', { name: 'n'.repeat(201) }, 'name'],
      ['label', { label: 'l'.repeat(201) }, 'label'],
      ['allowed_models count', { allowed_models: Array.from({ length: 5000 }, (_, i) => `m/${i}`) }, 'allowed_models'],
      ['allowed_models item', { allowed_models: ['m'.repeat(1000)] }, 'allowed_models.0'],
      ['allowed_api_key_hashes count', { allowed_api_key_hashes: Array(5000).fill(hash) }, 'allowed_api_key_hashes'],
    ]
    for (const [what, fields, param] of cases) {
      for (const [method, path, body] of [
        ['POST', '', { key: CUSTOMER_KEY, provider: 'alpha', ...fields }],
        ['PATCH', `/${id}`, fields],
      ] as const) {
        const res = await pair.byok(0, c.auth, method, path, body)
        expect(res.status, `${method} ${what}`).toBe(400)
        const { error } = await res.json()
        expect(error.param, `${method} ${what}`).toBe(param)
        expect(JSON.stringify(error)).not.toContain('kkkkkkkk') // never the secret, not even in part
      }
    }
    expect((await (await pair.byok(1, c.auth, 'GET', '')).json()).total_count).toBe(1)
  })

  it('takes byok.maxCredentials as a whole number of at least 1, 50 by default', async () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => createGateway({ storage: kind.open(), secret: TEST_SECRET, logger: false, byok: { maxCredentials: bad } })).toThrow(/maxCredentials/)
    }
    const gateway = createGateway({ storage: kind.open(), secret: TEST_SECRET, logger: false })
    expect(gateway.context.options.byok.maxCredentials).toBe(50)
    await gateway.close()
  })
})
