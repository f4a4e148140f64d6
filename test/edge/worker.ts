// The Worker the workerd tests run (test/edge/workers.test.ts): the gateway through the Workers adapter, its records
// and money in the Durable Object (one per org beside the global one when env.PER_ORG is '1'), one OpenAI-compatible
// provider at the fake upstream (env.UPSTREAM_URL, in Node). A path under `/per-org/` goes to the per-org gateway
// whatever env.PER_ORG says (the migration's test: one object first, then one per org over the same objects).
import { migrateToPerOrg, ModelGatewayObject, workersGateway } from '../../adapters/workers'
import { type DurableObjectNamespaceLike, durableObjectStorage, type GatewayOptions, openaiCompatible } from '../../src/edge'

export { ModelGatewayObject }

interface Env {
  UPSTREAM_URL: string
  SECRET: string
  MODEL_GATEWAY: unknown
  PER_ORG?: string
}

const pricing = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }

const options = (env: Env): GatewayOptions => ({
  secret: env.SECRET,
  logger: false,
  providers: [
    openaiCompatible({
      slug: 'up',
      name: 'Up',
      baseURL: env.UPSTREAM_URL,
      apiKey: 'sk-up',
      byokSupported: true,
      models: [{ id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing }],
    }),
  ],
})
const oneObject = workersGateway<Env>(options)
const perOrg = workersGateway<Env>(options, { perOrg: true })

export default {
  async fetch(incoming: Request, env: Env): Promise<Response> {
    const forced = new URL(incoming.url).pathname.startsWith('/per-org/')
    const request = forced ? new Request(incoming.url.replace('/per-org/', '/'), incoming) : incoming
    const handler = forced || env.PER_ORG === '1' ? perOrg : oneObject
    const url = new URL(request.url)
    // The move of the one object's data into one object per org (docs/edge.md#moving-a-deployment-to-one-object-per-org).
    if (url.pathname === '/test/migrate') return Response.json(await migrateToPerOrg(env.MODEL_GATEWAY as DurableObjectNamespaceLike))
    // The test's own setup: a user with credits and a key, through the gateway's admin API (as a host's code would).
    if (url.pathname === '/test/customer') {
      const { credits, keyLimit } = (await request.json()) as { credits?: string; keyLimit?: string }
      const { admin } = handler.gateway(env)
      const user = await admin.createUser({ email: `user-${crypto.randomUUID()}@example.com` })
      if (credits) await admin.addCredits(user.org_id, credits)
      const issued = await admin.issueKey({ userId: user.id, label: 'test key', creditLimit: keyLimit })
      return Response.json({ user, key: issued.key })
    }
    // A listing through a storage of its own over the same objects (across every org's object when PER_ORG is '1').
    if (url.pathname === '/test/keys') {
      const storage = durableObjectStorage(env.MODEL_GATEWAY as DurableObjectNamespaceLike, { perOrg: env.PER_ORG === '1' })
      return Response.json(await storage.getKeys(url.searchParams.get('base')!))
    }
    if (url.pathname === '/test/credits') return Response.json(await handler.gateway(env).admin.getCredits(url.searchParams.get('org')!))
    if (url.pathname === '/test/usage') return Response.json(await handler.gateway(env).context.usage.list(url.searchParams.get('org')!))
    return handler.fetch(request, env)
  },
}
