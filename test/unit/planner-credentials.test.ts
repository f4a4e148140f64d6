import { describe, expect, it } from 'vitest'
import { parseProviderKeys } from '../../src/http/provider-keys'
import { applicableCredentials } from '../../src/routing/planner/credentials'
import { KEY, credentialOf, entryOf, labels, offerOf, planChat, providerOf, thrownBy, usd } from '../helpers/planner'

// The credentials stage of the planner (docs/byok.md "Which credential serves a request"): the org's own keys and
// the service's, on plain offers and credential records.

const o = providerOf('o', { byokSupported: true })
const p = providerOf('p', { byokSupported: true })
const s = providerOf('s', { byokSupported: true, serviceKey: false })
const n = providerOf('n')
// p is cheaper than o; both retain nothing (for zdr).
const chat = entryOf('acme/chat', [
  offerOf(o, { id: 'acme/chat', pricing: usd('0.000002') }, { retainsPrompts: false }),
  offerOf(p, { id: 'acme/chat', pricing: usd('0.000001') }, { retainsPrompts: false }),
])
const plan = (credentials: ReturnType<typeof credentialOf>[], provider: Record<string, unknown> = {}, entries = [chat]) =>
  labels(planChat(entries, { provider }, { credentials }), entries.length > 1)

describe('credentials', () => {
  it('uses the service keys alone when the org has no credential', () => {
    expect(plan([])).toEqual(['p', 'o'])
  })

  it('puts the customer’s own keys first, whatever provider.order says, in the order given (sort_order)', () => {
    expect(plan([credentialOf('k1', 'o')])).toEqual(['o:k1', 'p', 'o'])
    expect(plan([credentialOf('k2', 'o'), credentialOf('k1', 'o'), credentialOf('kp', 'p')])).toEqual(['p:kp', 'o:k2', 'o:k1', 'p', 'o'])
    expect(plan([credentialOf('k1', 'o')], { order: ['p'] })).toEqual(['o:k1', 'p', 'o'])
  })

  it('tries an is_fallback key right after its provider’s service key', () => {
    expect(plan([credentialOf('kf', 'o', { is_fallback: true })])).toEqual(['p', 'o', 'o:kf'])
    expect(plan([credentialOf('kf', 'p', { is_fallback: true }), credentialOf('k1', 'o')])).toEqual(['o:k1', 'p', 'p:kf', 'o'])
  })

  it('drops the service key of a provider a credential says always_use for', () => {
    expect(plan([credentialOf('k1', 'o', { always_use: true })])).toEqual(['o:k1', 'p'])
    // An always_use key that does not apply to the model leaves the service key in place.
    expect(plan([credentialOf('k1', 'o', { always_use: true, allowed_models: ['acme/other'] })])).toEqual(['p', 'o'])
  })

  it('drops the service key of a provider any enabled credential says is_byok_only for, even one that does not apply', () => {
    expect(plan([credentialOf('k1', 'o', { is_byok_only: true })])).toEqual(['o:k1', 'p'])
    expect(plan([credentialOf('k1', 'o', { is_byok_only: true, allowed_models: ['acme/other'] })])).toEqual(['p'])
    expect(plan([credentialOf('k1', 'o', { is_byok_only: true, disabled: true })])).toEqual(['p', 'o'])
  })

  it('applies a credential only where its allowances say: models, key hashes, users; never a disabled one', () => {
    const entry = entryOf('acme/chat', [offerOf(o, { id: 'acme/chat' })])
    const one = (fields: Parameters<typeof credentialOf>[2]) => applicableCredentials([credentialOf('k', 'o', fields)], entry, entry.offers[0], KEY).length
    expect(one({})).toBe(1)
    expect([one({ allowed_models: ['acme/chat'] }), one({ allowed_models: ['acme/other'] })]).toEqual([1, 0])
    expect([one({ allowed_api_key_hashes: ['h1'] }), one({ allowed_api_key_hashes: ['h2'] })]).toEqual([1, 0])
    expect([one({ allowed_user_ids: ['u1'] }), one({ allowed_user_ids: ['u2'] }), one({ allowed_user_ids: [] })]).toEqual([1, 0, 1])
    expect(one({ disabled: true })).toBe(0)
    expect(applicableCredentials([credentialOf('k', 'p')], entry, entry.offers[0], KEY)).toEqual([])
  })

  it('never applies a credential to a provider that takes no customer’s key', () => {
    const entry = entryOf('acme/chat', [offerOf(n, { id: 'acme/chat' })])
    expect(plan([credentialOf('k1', 'n', { always_use: true })], {}, [entry])).toEqual(['n'])
  })

  it('with zdr, never goes through a key its customer declared not ZDR', () => {
    const credentials = [credentialOf('k1', 'o', { declared_zdr: false }), credentialOf('k2', 'o', { declared_zdr: true }), credentialOf('k3', 'o')]
    expect(plan(credentials)).toEqual(['o:k1', 'o:k2', 'o:k3', 'p', 'o'])
    expect(plan(credentials, { zdr: true })).toEqual(['o:k2', 'o:k3', 'p', 'o'])
  })

  it('orders credentials within each model’s group: a fallback model’s own key comes after the first model’s service key', () => {
    const first = entryOf('acme/first', [offerOf(o, { id: 'acme/first' })])
    const second = entryOf('acme/second', [offerOf(o, { id: 'acme/second' })])
    expect(plan([credentialOf('k1', 'o', { allowed_models: ['acme/second'] })], {}, [first, second])).toEqual([
      'o acme/first',
      'o:k1 acme/second',
      'o acme/second',
    ])
  })

  it('serves a provider without a service key only through the customer’s key; 503 naming it without one', () => {
    const entry = entryOf('acme/chat', [offerOf(s, { id: 'acme/chat' })])
    expect(plan([credentialOf('k1', 's')], {}, [entry])).toEqual(['s:k1'])
    const refused = thrownBy(() => plan([], {}, [entry]))
    expect(refused).toMatchObject({
      status: 503,
      message: 'No provider is available for acme/chat: s (acme/chat): needs your own key (BYOK) for this provider',
      metadata: { models: ['acme/chat'], reasons: ['s (acme/chat): needs your own key (BYOK) for this provider'] },
    })
  })

  it('reads no credential when nobody calls (no principal): the service keys only', () => {
    expect(labels(planChat([chat]))).toEqual(['p', 'o'])
    const entry = entryOf('acme/chat', [offerOf(s, { id: 'acme/chat' })])
    expect(thrownBy(() => planChat([entry])).status).toBe(503)
  })

  describe('keys the request gave (X-Provider-API-Keys, docs/byok.md#keys-for-one-request)', () => {
    const withKeys = (keys: Record<string, string>, credentials: ReturnType<typeof credentialOf>[] = [], entries = [chat]) =>
      labels(planChat(entries, {}, { credentials, requestKeys: parseProviderKeys(JSON.stringify(keys)) }))

    it('tries the request’s key first, then the service keys, as a stored key without always_use', () => {
      expect(withKeys({ o: 'sk-o' })).toEqual(['o:request', 'p', 'o'])
      const [first] = planChat([chat], {}, { credentials: [], requestKeys: parseProviderKeys('{"o":"sk-o"}') })
      expect(first.requestKey?.secret()).toBe('sk-o')
      expect(first.credential).toMatchObject({ id: 'request', provider: 'o', sealed_key: '' })
    })

    it('takes the place of the org’s stored keys for that provider, whose always_use and is_byok_only still hold', () => {
      expect(withKeys({ o: 'sk-o' }, [credentialOf('k1', 'o'), credentialOf('kp', 'p')])).toEqual(['p:kp', 'o:request', 'p', 'o'])
      expect(withKeys({ o: 'sk-o' }, [credentialOf('kf', 'o', { is_fallback: true })])).toEqual(['o:request', 'p', 'o'])
      expect(withKeys({ o: 'sk-o' }, [credentialOf('k1', 'o', { always_use: true })])).toEqual(['o:request', 'p'])
      expect(withKeys({ o: 'sk-o' }, [credentialOf('k1', 'o', { is_byok_only: true, allowed_models: ['acme/other'] })])).toEqual(['o:request', 'p'])
    })

    it('serves a provider without a service key, and changes nothing for a provider the model is not served by', () => {
      const only = entryOf('acme/only-s', [offerOf(s, { id: 'acme/only-s' })])
      expect(withKeys({ s: 'sk-s' }, [], [only])).toEqual(['s:request'])
      expect(withKeys({ s: 'sk-s' })).toEqual(['p', 'o'])
    })
  })
})
