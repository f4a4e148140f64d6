// The Nuxt module's storage on Nitro's Cloudflare presets (adapters/nuxt/runtime/cloudflare.ts,
// docs/edge.md#nuxt-on-cloudflare): `modelGateway.cloudflare` reaches durableObjectStorage, `perOrg` and the
// gateway's storagePrefix included. The built Worker is tested by `npm run test:edge-nuxt`; here the objects run in
// this process (test/helpers/local-objects.ts).
import { describe, expect, it, vi } from 'vitest'
import { cloudflareStorage } from '../../adapters/nuxt/runtime/cloudflare'
import { createGateway } from '../../src/edge'
import { localNamespace } from '../helpers/local-objects'

// The runtime imports the package's edge entry, which these sources are.
vi.mock('model-gateway/edge', () => import('../../src/edge'))

const secret = 'test-secret-test-secret-test-secret-0123'

describe('Nuxt on Cloudflare: modelGateway.cloudflare reaches the Durable Object storage', () => {
  it('keeps every record in the one object by default', async () => {
    const namespace = localNamespace()
    const event = { context: { cloudflare: { env: { MODEL_GATEWAY: namespace } } } }
    const gateway = createGateway({ secret, logger: false, storage: cloudflareStorage(event, { binding: 'MODEL_GATEWAY', objectName: 'app-gw' }) })
    const user = await gateway.admin.createUser({ email: 'one@example.com' })
    await gateway.admin.addCredits(user.org_id, '2.5')
    expect(namespace.keysOf('app-gw')).toContain(`gateway:credits:${user.org_id}:granted`)
    expect(namespace.keysOf(`app-gw:org:${user.org_id}`)).toEqual([])
  })

  it('with perOrg, an org’s money in its own object, under the gateway’s storagePrefix', async () => {
    const namespace = localNamespace()
    const event = { context: { cloudflare: { env: { GW: namespace } } } }
    const storage = cloudflareStorage(event, { binding: 'GW', objectName: 'app-gw', perOrg: true }, 'shop')
    const gateway = createGateway({ secret, logger: false, storage, storagePrefix: 'shop' })
    const user = await gateway.admin.createUser({ email: 'per-org@example.com' })
    await gateway.admin.addCredits(user.org_id, '2.5')
    expect(namespace.keysOf(`app-gw:org:${user.org_id}`)).toContain(`shop:credits:${user.org_id}:granted`)
    expect(namespace.keysOf('app-gw').filter((key) => key.startsWith('shop:credits:'))).toEqual([])
    expect((await gateway.admin.getCredits(user.org_id)).balance).toBe('2.5')
  })

  it('names the binding when the env has none', () => {
    expect(() => cloudflareStorage({ context: { cloudflare: { env: {} } } }, { binding: 'GW', perOrg: true })).toThrow(
      /env\.GW is not a Durable Object binding/,
    )
  })
})
