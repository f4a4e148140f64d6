import { describe, expect, it } from 'vitest'
import { plan } from '../../src/routing/planner'
import { requestedModels } from '../../src/routing/planner/capability'
import { entryOf, healthOf, labels, offerOf, planChat, providerOf, thrownBy } from '../helpers/planner'

// The capability stage and the planner's refusals (docs/capabilities.md, docs/routing.md "Nothing left"): the same
// 400, 404 and 503 with the same messages and metadata as the gateway answers, from plain data.

const [a, b] = ['a', 'b'].map((slug) => providerOf(slug))
const e = providerOf('e', { embed: true })
const chatOffers = (id: string) => [offerOf(a, { id }), offerOf(b, { id, pricing: { prompt: '0.000002', completion: '0.000002' } })]
const chat = entryOf('acme/chat', chatOffers('acme/chat'))
const other = entryOf('acme/other', chatOffers('acme/other'))
const embed = entryOf('acme/embed', [offerOf(e, { id: 'acme/embed', endpoints: ['/embeddings'] })])

describe('capability', () => {
  it('names the request’s models, its model first, each once; 400 when it names none', () => {
    expect(requestedModels({ model: 'm1', models: ['m2', 'm1', 'm3'] })).toEqual(['m1', 'm2', 'm3'])
    expect(requestedModels({ model: null, models: ['m2'] })).toEqual(['m2'])
    expect(thrownBy(() => requestedModels({ models: [] }))).toMatchObject({ status: 400, message: 'model: is required', param: 'model' })
    expect(thrownBy(() => planChat([]))).toMatchObject({ status: 400, message: 'model: is required', param: 'model' })
  })

  it('skips a listed model that does not serve the capability while another one does, without reading the catalogue', () => {
    let read = 0
    const catalogue = () => {
      read++
      return [chat, embed]
    }
    const attempts = plan({
      request: { capability: 'chat', model: 'acme/embed', models: ['acme/chat'] },
      entries: [embed, chat],
      catalogue,
      health: healthOf(),
    })
    expect(labels(attempts, true)).toEqual(['a acme/chat', 'b acme/chat'])
    const embedding = plan({
      request: { capability: 'embeddings', model: 'acme/chat', models: ['acme/embed'] },
      entries: [chat, embed],
      catalogue,
      health: healthOf(),
    })
    expect(labels(embedding, true)).toEqual(['e acme/embed'])
    expect(read).toBe(0)
  })

  it('answers 400 naming what the model serves and which models do, when no model of the request serves it', () => {
    expect(thrownBy(() => planChat([embed], {}, { catalogue: [embed, other, chat] }))).toMatchObject({
      status: 400,
      message: 'model: acme/embed does not serve /chat/completions (it serves /embeddings). Models that do: acme/other, acme/chat.',
      param: 'model',
    })
    expect(thrownBy(() => planChat([embed], { model: null, models: ['acme/embed'] }, { catalogue: [embed] }))).toMatchObject({
      status: 400,
      message: 'model: acme/embed does not serve /chat/completions (it serves /embeddings). No model of this gateway does.',
      param: 'models',
    })
    const many = Array.from({ length: 21 }, (_, i) => entryOf(`acme/m${i}`, chatOffers(`acme/m${i}`)))
    const { message } = thrownBy(() => planChat([embed], {}, { catalogue: many }))
    expect(message).toBe(
      `model: acme/embed does not serve /chat/completions (it serves /embeddings). Models that do: ${many
        .slice(0, 20)
        .map((m) => m.id)
        .join(', ')}, ….`,
    )
  })
})

describe('refusals', () => {
  it('answers 404 naming each provider and the preference that excluded it, over every model of the request', () => {
    const refused = thrownBy(() => planChat([chat, other], { provider: { ignore: ['a'], only: ['a', 'c'] } }))
    expect(refused.status).toBe(404)
    expect(refused.param).toBe('provider')
    expect(refused.message).toBe(
      "No provider of acme/chat, acme/other matches the request's provider preferences: " +
        'a (acme/chat): ignored by provider.ignore; b (acme/chat): not in provider.only; ' +
        'a (acme/other): ignored by provider.ignore; b (acme/other): not in provider.only',
    )
    expect(refused.metadata).toEqual({
      models: ['acme/chat', 'acme/other'],
      reasons: [
        'a (acme/chat): ignored by provider.ignore',
        'b (acme/chat): not in provider.only',
        'a (acme/other): ignored by provider.ignore',
        'b (acme/other): not in provider.only',
      ],
      excluded: [
        { provider: 'a', model: 'acme/chat', preference: 'ignore', reason: 'ignored by provider.ignore' },
        { provider: 'b', model: 'acme/chat', preference: 'only', reason: 'not in provider.only' },
        { provider: 'a', model: 'acme/other', preference: 'ignore', reason: 'ignored by provider.ignore' },
        { provider: 'b', model: 'acme/other', preference: 'only', reason: 'not in provider.only' },
      ],
    })
    // A model of the request that does not serve the capability is still named.
    expect(thrownBy(() => planChat([embed, chat], { provider: { only: [] } })).message).toBe(
      "No provider of acme/embed, acme/chat matches the request's provider preferences: a (acme/chat): not in provider.only; b (acme/chat): not in provider.only",
    )
  })

  it('answers 503 when an offer was also left out for another reason than a preference (its own key is needed)', () => {
    const keyOnly = providerOf('k', { byokSupported: true, serviceKey: false })
    const entry = entryOf('acme/chat', [offerOf(a, { id: 'acme/chat' }), offerOf(keyOnly, { id: 'acme/chat' })])
    const refused = thrownBy(() => planChat([entry], { provider: { ignore: ['a'] } }))
    expect(refused.status).toBe(503)
    expect(refused.param).toBeUndefined()
    expect(refused.message).toBe(
      'No provider is available for acme/chat: a (acme/chat): ignored by provider.ignore; k (acme/chat): needs your own key (BYOK) for this provider',
    )
    expect(refused.metadata).toEqual({
      models: ['acme/chat'],
      reasons: ['a (acme/chat): ignored by provider.ignore', 'k (acme/chat): needs your own key (BYOK) for this provider'],
    })
  })

  it('answers 503 naming the route of another capability when `accept` leaves nothing', () => {
    const refused = thrownBy(() =>
      plan({
        request: { capability: 'embeddings', model: 'acme/embed', accept: () => false },
        entries: [embed],
        catalogue: () => [embed],
        health: healthOf(),
      }),
    )
    expect(refused).toMatchObject({
      status: 503,
      message: 'No provider is available for acme/embed on /embeddings: e (acme/embed): cannot serve this request',
      metadata: { models: ['acme/embed'], reasons: ['e (acme/embed): cannot serve this request'] },
    })
  })
})
