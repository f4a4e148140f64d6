import { createHash, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openaiCompatible, type ProviderModel } from '../../src/index'
import type { Principal } from '../../src/stores/account-types'
import { rulesFor } from '../../src/policies/rules'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'

// The built-in rules of keys, users and orgs (docs/policies.md#built-in-rules) over real HTTP: model and provider
// allowlists, max_price, enforce_zdr and data_collection, on chat, /messages, /responses and /embeddings.

const json = { 'content-type': 'application/json' }
const usd = (prompt: string) => ({ prompt, completion: prompt, currency: 'USD' })

// Three providers of rl/model, cheapest first: trains (retains and trains), logs (retains, no training), zdrco (neither).
const PROVIDERS = {
  trains: { name: 'Trains', price: '0.000001', dataPolicy: { training: true, retains_prompts: true } },
  logs: { name: 'Logs', price: '0.000003', dataPolicy: { training: false, retains_prompts: true } },
  zdrco: { name: 'ZDR Co', price: '0.000004', dataPolicy: { training: false, retains_prompts: false } },
} as const
type Slug = keyof typeof PROVIDERS

describe('built-in rules', () => {
  const fakes = {} as Record<Slug, FakeOpenAI>
  let t: TestGateway

  beforeAll(async () => {
    for (const slug of Object.keys(PROVIDERS) as Slug[]) fakes[slug] = await startFakeOpenAI()
    const chatModel = (slug: Slug, id: string): ProviderModel => ({ id, upstreamId: 'gpt-test', pricing: usd(PROVIDERS[slug].price) })
    t = await startGateway({
      health: { failureThreshold: 1_000 },
      providers: (Object.keys(PROVIDERS) as Slug[]).map((slug) =>
        openaiCompatible({
          slug,
          name: PROVIDERS[slug].name,
          baseURL: fakes[slug].url,
          dataPolicy: PROVIDERS[slug].dataPolicy,
          models: [
            chatModel(slug, 'rl/model'),
            chatModel(slug, 'rl/other'),
            { id: 'rl/embed', upstreamId: 'text-embedding-3-small', pricing: usd(PROVIDERS[slug].price), endpoints: ['/embeddings'] },
          ],
        }),
      ),
    })
  })
  afterAll(async () => {
    await t.close()
    await Promise.all(Object.values(fakes).map((f) => f.close()))
  })

  const post = async (auth: Record<string, string>, path: string, body: Record<string, unknown>) => {
    const res = await t.request(`/api/v1${path}`, { method: 'POST', headers: { ...auth, ...json }, body: JSON.stringify(body) })
    return { status: res.status, body: await res.json() }
  }
  const chat = (auth: Record<string, string>, body: Record<string, unknown> = {}) =>
    post(auth, '/chat/completions', { model: 'rl/model', messages: [{ role: 'user', content: 'hi' }], ...body })
  const served = async (auth: Record<string, string>, body: Record<string, unknown> = {}) => {
    const { status, body: answer } = await chat(auth, body)
    expect(status, JSON.stringify(answer)).toBe(200)
    return answer.provider
  }
  const customer = () => createCustomer(t.gateway, { credits: '5' })
  const principalOf = async (key: string) => (await t.gateway.admin.findUserByKey(key)) as Principal

  it('without rules a request goes to the cheapest provider', async () => {
    const c = await customer()
    expect(await served(c.auth)).toBe('Trains')
  })

  it('allowed_models of a key: another model, or a fallback outside it, is 403 model_not_allowed naming the key', async () => {
    const c = await customer()
    await t.gateway.admin.setKeyRules(c.record.hash, { allowed_models: ['RL/Model'] })
    expect(await served(c.auth)).toBe('Trains')
    const calls = fakes.trains.requests.length
    const other = await chat(c.auth, { model: 'rl/other' })
    expect(other.status).toBe(403)
    expect(other.body.error).toMatchObject({
      code: 403,
      type: 'forbidden',
      param: 'model',
      metadata: { reason: 'model_not_allowed', rule: 'key', model: 'rl/other' },
    })
    expect(other.body.error.message).toBe("Model rl/other is not allowed for this request: it is not in the API key's allowed_models")
    const fallback = await chat(c.auth, { models: ['rl/other'] })
    expect(fallback.status).toBe(403)
    expect(fallback.body.error).toMatchObject({ param: 'models', metadata: { reason: 'model_not_allowed', rule: 'key', model: 'rl/other' } })
    // A model not in the catalogue is refused by the rule too, before the catalogue is read.
    expect((await chat(c.auth, { model: 'rl/unknown' })).body.error.metadata).toMatchObject({ reason: 'model_not_allowed' })
    expect(fakes.trains.requests.length).toBe(calls)
  })

  it('a vendor/* entry allows every model of the vendor; the user and org lists apply too, naming their owner', async () => {
    const c = await customer()
    await t.gateway.admin.setKeyRules(c.record.hash, { allowed_models: ['rl/*'] })
    expect(await served(c.auth, { model: 'rl/other' })).toBe('Trains')
    await t.gateway.admin.setUserRules(c.user.id, { allowed_models: ['rl/model'] })
    const byUser = await chat(c.auth, { model: 'rl/other' })
    expect(byUser.status).toBe(403)
    expect(byUser.body.error.metadata).toMatchObject({ reason: 'model_not_allowed', rule: 'user' })
    await t.gateway.admin.setOrgRules(c.user.org_id, { allowed_models: ['other/*'] })
    const byOrg = await chat(c.auth)
    expect(byOrg.body.error.metadata).toMatchObject({ reason: 'model_not_allowed', rule: 'org', model: 'rl/model' })
    await t.gateway.admin.setOrgRules(c.user.org_id, { allowed_models: null })
    expect(await served(c.auth)).toBe('Trains')
  })

  it('allowed_providers drops other providers in routing; none left is 403 provider_not_allowed naming the owner', async () => {
    const c = await customer()
    await t.gateway.admin.setUserRules(c.user.id, { allowed_providers: ['logs', 'zdrco'] })
    expect(await served(c.auth)).toBe('Logs')
    await t.gateway.admin.setKeyRules(c.record.hash, { allowed_providers: ['ZDRCO'] })
    expect(await served(c.auth)).toBe('ZDR Co')
    await t.gateway.admin.setKeyRules(c.record.hash, { allowed_providers: ['trains'] })
    const none = await chat(c.auth)
    expect(none.status).toBe(403)
    expect(none.body.error.metadata).toMatchObject({ reason: 'provider_not_allowed', rule: 'user', models: ['rl/model'] })
    expect(none.body.error.metadata.reasons).toEqual([
      "trains (rl/model): not in the user's allowed_providers",
      "logs (rl/model): not in the API key's allowed_providers",
      "zdrco (rl/model): not in the API key's allowed_providers",
    ])
    // The request's own provider.only narrows further within what the rules allow.
    await t.gateway.admin.setKeyRules(c.record.hash, { allowed_providers: null })
    const narrowed = await chat(c.auth, { provider: { only: ['trains', 'zdrco'] } })
    expect(narrowed.body.provider).toBe('ZDR Co')
  })

  it('max_price of a key applies to every request, the lower of the key and the request winning', async () => {
    const c = await customer()
    // USD per million tokens: trains 1, logs 3, zdrco 4.
    await t.gateway.admin.setKeyRules(c.record.hash, { max_price: { prompt: 2 } })
    const principal = await principalOf(c.key)
    expect(principal.key.rules?.max_price).toEqual({ prompt: '2' })
    expect(await served(c.auth, { provider: { order: ['zdrco', 'logs', 'trains'] } })).toBe('Trains')
    // The request's lower limit wins over the key's.
    const lower = await chat(c.auth, { provider: { max_price: { prompt: '0.5' } } })
    expect(lower.status).toBe(404)
    expect(lower.body.error.metadata.reasons[0]).toBe('trains (rl/model): prompt price for a prompt of up to 11 tokens is above provider.max_price.prompt')
    // The key's lower limit wins over the request's.
    await t.gateway.admin.setKeyRules(c.record.hash, { max_price: { prompt: '0.5' } })
    const keys = await chat(c.auth, { provider: { max_price: { prompt: 10 } } })
    expect(keys.status).toBe(404)
    expect(keys.body.error.metadata.reasons[0]).toBe(
      "trains (rl/model): prompt price for a prompt of up to 11 tokens is above the API key's max_price.prompt rule",
    )
    // The org's and the key's: the lowest wins.
    await t.gateway.admin.setKeyRules(c.record.hash, { max_price: { prompt: '3.5' } })
    await t.gateway.admin.setOrgRules(c.user.org_id, { max_price: { prompt: '3', completion: '100' } })
    expect(rulesFor(await principalOf(c.key)).maxPrice).toEqual({ prompt: { value: '3', owner: 'org' }, completion: { value: '100', owner: 'org' } })
    expect(await served(c.auth, { provider: { order: ['zdrco', 'logs', 'trains'] } })).toBe('Logs')
  })

  it('enforce_zdr of an org and data_collection "deny" of a user keep only providers whose data policy allows them', async () => {
    const c = await customer()
    await t.gateway.admin.setUserRules(c.user.id, { data_collection: 'deny' })
    expect(await served(c.auth)).toBe('Logs')
    await t.gateway.admin.setOrgRules(c.user.org_id, { enforce_zdr: true })
    expect(await served(c.auth)).toBe('ZDR Co')
    // A request that sends zdr: false does not undo the org's rule.
    expect(await served(c.auth, { provider: { zdr: false, data_collection: 'allow' } })).toBe('ZDR Co')
    const none = await chat(c.auth, { provider: { ignore: ['zdrco'] } })
    expect(none.status).toBe(404)
    expect(none.body.error.metadata.reasons).toEqual([
      "trains (rl/model): excluded by the org's enforce_zdr rule: its data policy lets it retain prompts",
      "logs (rl/model): excluded by the org's enforce_zdr rule: its data policy lets it retain prompts",
      'zdrco (rl/model): ignored by provider.ignore',
    ])
    await t.gateway.admin.setOrgRules(c.user.org_id, { enforce_zdr: null })
    const denied = await chat(c.auth, { provider: { ignore: ['logs', 'zdrco'] } })
    expect(denied.body.error.metadata.reasons[0]).toBe(
      'trains (rl/model): excluded by the user\'s data_collection "deny" rule: its data policy lets it train on prompts',
    )
    expect(await served(c.auth)).toBe('Logs')
  })

  it('/messages answers a refused model in Anthropic’s error shape, and routes within the rules', async () => {
    const c = await customer()
    await t.gateway.admin.setKeyRules(c.record.hash, { allowed_models: ['rl/model'], enforce_zdr: true })
    const message = { max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }
    const refused = await post(c.auth, '/messages', { model: 'rl/other', ...message })
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ type: 'error', error: { type: 'permission_error', metadata: { reason: 'model_not_allowed', rule: 'key' } } })
    const calls = fakes.zdrco.requests.length
    const ok = await post(c.auth, '/messages', { model: 'rl/model', ...message })
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    expect(fakes.zdrco.requests.length).toBe(calls + 1)
  })

  it('/responses answers a refused provider in OpenAI’s error shape', async () => {
    const c = await customer()
    await t.gateway.admin.setOrgRules(c.user.org_id, { allowed_providers: ['nobody'] })
    const refused = await post(c.auth, '/responses', { model: 'rl/model', input: 'hi' })
    expect(refused.status).toBe(403)
    expect(refused.body.error).toMatchObject({ type: 'permission_error', code: 'forbidden', metadata: { reason: 'provider_not_allowed', rule: 'org' } })
    await t.gateway.admin.setOrgRules(c.user.org_id, { allowed_providers: ['logs'] })
    const ok = await post(c.auth, '/responses', { model: 'rl/model', input: 'hi' })
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    expect(ok.body.status).toBe('completed')
  })

  it('/completions: a refused model is the same 403', async () => {
    const c = await customer()
    await t.gateway.admin.setUserRules(c.user.id, { allowed_models: ['rl/model'] })
    const refused = await post(c.auth, '/completions', { model: 'rl/other', prompt: 'hi' })
    expect(refused.status).toBe(403)
    expect(refused.body.error).toMatchObject({ code: 403, param: 'model', metadata: { reason: 'model_not_allowed', rule: 'user', model: 'rl/other' } })
    const ok = await post(c.auth, '/completions', { model: 'rl/model', prompt: 'hi' })
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
  })

  it('/embeddings: allowlists and data rules apply as on chat', async () => {
    const c = await customer()
    await t.gateway.admin.setKeyRules(c.record.hash, { allowed_models: ['rl/model'] })
    const refused = await post(c.auth, '/embeddings', { model: 'rl/embed', input: 'hello' })
    expect(refused.status).toBe(403)
    expect(refused.body.error.metadata).toMatchObject({ reason: 'model_not_allowed', rule: 'key', model: 'rl/embed' })
    await t.gateway.admin.setKeyRules(c.record.hash, { allowed_models: ['rl/embed'], data_collection: 'deny' })
    const ok = await post(c.auth, '/embeddings', { model: 'rl/embed', input: 'hello' })
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    expect(ok.body.provider).toBe('Logs')
  })

  it('a key minted by a key is bound by the rules of the keys above it, as they are now', async () => {
    const c = await customer()
    await t.gateway.admin.setKeyRules(c.record.hash, { allowed_models: ['rl/model'], allowed_providers: ['logs', 'zdrco'] })
    const v = randomBytes(32).toString('base64url')
    const code = await post(c.auth, '/auth/keys/code', {
      callback_url: 'https://app.example/cb',
      code_challenge: createHash('sha256').update(v).digest('base64url'),
    })
    expect(code.status).toBe(200)
    const exchanged = await post({}, '/auth/keys', { code: code.body.code, code_verifier: v })
    expect(exchanged.status).toBe(200)
    const minted = { authorization: `Bearer ${exchanged.body.key}` }
    expect(await served(minted)).toBe('Logs')
    const refused = await chat(minted, { model: 'rl/other' })
    expect(refused.status).toBe(403)
    expect(refused.body.error.metadata).toMatchObject({ reason: 'model_not_allowed', rule: 'key' })
    // A change of the parent's rules bounds the minted key at once.
    await t.gateway.admin.setKeyRules(c.record.hash, { allowed_providers: ['zdrco'] })
    expect(await served(minted)).toBe('ZDR Co')
  })

  it('bad rules are a 400 naming the field, and change nothing', async () => {
    const c = await customer()
    await expect(t.gateway.admin.setKeyRules(c.record.hash, { max_price: { prompt: '-1' } } as never)).rejects.toMatchObject({ status: 400 })
    await expect(t.gateway.admin.setUserRules(c.user.id, { redact: { input: true, output: false, kinds: ['ssn'] } } as never)).rejects.toMatchObject({
      status: 400,
    })
    expect((await principalOf(c.key)).key.rules).toBeUndefined()
  })

  it('/keys: POST and PATCH set a key’s rules, the key object and GET /key show them, and they apply to its requests', async () => {
    const c = await customer()
    const manager = await t.gateway.admin.issueKey({ userId: c.user.id, management: true })
    const admin = { authorization: `Bearer ${manager.key}` }
    const send = async (method: string, path: string, body?: unknown) => {
      const res = await t.request(`/api/v1${path}`, { method, headers: { ...admin, ...json }, body: body === undefined ? undefined : JSON.stringify(body) })
      return { status: res.status, body: await res.json() }
    }
    const created = await send('POST', '/keys', {
      name: 'ruled',
      allowed_models: ['rl/model', 'rl/model'],
      allowed_providers: ['Logs', 'zdrco'],
      max_price: { prompt: '3.50', completion: 10 },
      redact: { input: true, output: false, kinds: ['email'] },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body.data).toMatchObject({
      allowed_models: ['rl/model'],
      allowed_providers: ['logs', 'zdrco'],
      max_price: { prompt: '3.5', completion: '10' },
      enforce_zdr: false,
      data_collection: null,
      redact: { input: true, output: false, kinds: ['email'] },
    })
    const auth = { authorization: `Bearer ${created.body.key}` }
    expect(await served(auth)).toBe('Logs')
    expect((await chat(auth, { model: 'rl/other' })).status).toBe(403)

    const hash = created.body.data.hash
    const patched = await send('PATCH', `/keys/${hash}`, { allowed_models: null, enforce_zdr: true, max_price: null })
    expect(patched.status, JSON.stringify(patched.body)).toBe(200)
    expect(patched.body.data).toMatchObject({ allowed_models: null, allowed_providers: ['logs', 'zdrco'], max_price: null, enforce_zdr: true })
    expect(await served(auth, { model: 'rl/other' })).toBe('ZDR Co')
    expect((await send('GET', `/keys/${hash}`)).body.data.enforce_zdr).toBe(true)

    const own = await t.request('/api/v1/key', { headers: auth })
    expect((await own.json()).data).toMatchObject({
      allowed_providers: ['logs', 'zdrco'],
      enforce_zdr: true,
      redact: { input: true, output: false, kinds: ['email'] },
    })

    const bad = await send('PATCH', `/keys/${hash}`, { allowed_providers: 'logs' })
    expect(bad.status).toBe(400)
    expect(bad.body.error.param).toBe('allowed_providers')
    const badPrice = await send('POST', '/keys', { name: 'x', max_price: { prompt: '1e3' } })
    expect(badPrice.status).toBe(400)
    expect(badPrice.body.error.param).toBe('max_price.prompt')
  })
})
