import { describe, expect, it } from 'vitest'
import { openaiCompatible } from '../../src/index'
import { createCustomer, startGateway } from '../helpers/server'
import { fsKind } from '../helpers/storages'

const json = { 'content-type': 'application/json' }
const provider = () =>
  openaiCompatible({
    slug: 'alpha',
    name: 'Alpha',
    baseURL: 'http://127.0.0.1:9/v1',
    apiKey: 'sk-service',
    byokSupported: true,
    models: [{ id: 'byok/model', upstreamId: 'm', pricing: { prompt: '0.000001', completion: '0.000002' } }],
  })

describe('BYOK credentials stored by 0.1 (before the per-org index)', () => {
  it('are indexed when a gateway starts, listed and counted, and the old counters are removed', async () => {
    const kind = fsKind()
    try {
      const first = await startGateway({ storage: kind.open(), providers: [provider()] })
      const customer = await createCustomer(first.gateway, { credits: '1' })
      const created = await first.request('/api/v1/byok', {
        method: 'POST',
        headers: { ...customer.auth, ...json },
        body: JSON.stringify({ key: 'sk-customer-0123456789abcdef', provider: 'alpha' }),
      })
      expect(created.status).toBe(201)
      const { id } = (await created.json()).data
      await first.close()

      // What 0.1 left: the record, a count and a version, no index.
      const storage = kind.open()
      const org = customer.user.org_id
      await storage.removeItem(`gateway:byok-index:${org}`)
      await storage.setItem(`gateway:byok-count:${org}`, { count: 1 })
      await storage.setItem(`gateway:byok-version:${org}`, { count: 3 })

      const second = await startGateway({ storage, providers: [provider()] })
      try {
        const list = async () =>
          (await (await second.request('/api/v1/byok', { headers: customer.auth })).json()) as { data: { id: string }[]; total_count: number }
        await expect.poll(async () => (await list()).total_count).toBe(1)
        expect((await list()).data.map((c) => c.id)).toEqual([id])
        expect(await storage.hasItem(`gateway:byok-count:${org}`)).toBe(false)
        expect(await storage.hasItem(`gateway:byok-version:${org}`)).toBe(false)
      } finally {
        await second.close()
      }
    } finally {
      await kind.cleanup()
    }
  })
})
