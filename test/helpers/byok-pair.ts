import type { GatewayOptions } from '../../src/index'
import { openaiCompatible } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from './server'
import type { StorageKind } from './storages'

export const SERVICE_KEY = 'sk-service-pair-0000'
export const CUSTOMER_KEY = 'sk-cust-pair-1111'
const json = { 'content-type': 'application/json' }
const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }

/** Two gateway instances over storages opened from one kind (as two servers over one store), a fake upstream that takes BYOK keys, and request helpers. */
export interface ByokPair {
  upstream: FakeOpenAI
  /** The two instances: requests numbered i go to `instances[i % 2]`. */
  instances: [TestGateway, TestGateway]
  /** A BYOK API call (`path` below /byok) to instance i % 2. */
  byok(i: number, auth: Record<string, string>, method: string, path: string, body?: unknown): Promise<Response>
  /** A chat request of the BYOK model to instance i % 2. */
  chat(i: number, auth: Record<string, string>): Promise<{ status: number; body: any }>
  /** A new customer with credits and a key. */
  customer(credits?: string): ReturnType<typeof createCustomer>
  close(): Promise<void>
}

/** Starts the pair; `byok` options apply to both instances. */
export async function startByokPair(kind: StorageKind, byok: GatewayOptions['byok'] = {}): Promise<ByokPair> {
  const upstream = await startFakeOpenAI({ apiKey: [SERVICE_KEY, CUSTOMER_KEY] })
  const providers = () => [
    openaiCompatible({
      slug: 'alpha',
      name: 'Alpha',
      baseURL: upstream.url,
      apiKey: SERVICE_KEY,
      byokSupported: true,
      models: [{ id: 'byok/model', upstreamId: 'gpt-test', pricing }],
    }),
  ]
  const start = () => startGateway({ storage: kind.open(), providers: providers(), byok: { settlementIntervalSeconds: 0, ...byok } })
  const instances: [TestGateway, TestGateway] = [await start(), await start()]
  const at = (i: number) => instances[i % 2]
  return {
    upstream,
    instances,
    byok: (i, auth, method, path, body) =>
      at(i).request(`/api/v1/byok${path}`, {
        method,
        headers: { ...auth, ...(body === undefined ? {} : json) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    async chat(i, auth) {
      const res = await at(i).request('/api/v1/chat/completions', {
        method: 'POST',
        headers: { ...auth, ...json },
        body: JSON.stringify({ model: 'byok/model', messages: [{ role: 'user', content: 'hello' }] }),
      })
      return { status: res.status, body: await res.json() }
    },
    customer: (credits = '5') => createCustomer(instances[0].gateway, { credits }),
    async close() {
      await Promise.all(instances.map((t) => t.close()))
      await upstream.close()
    },
  }
}
