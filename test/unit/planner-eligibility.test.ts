import { describe, expect, it } from 'vitest'
import { eligibleOffers, exclusionOf, priceAboveMax } from '../../src/routing/planner/eligibility'
import { readPreferences } from '../../src/routing/planner/preferences'
import type { ProviderPreferences } from '../../src/schemas/provider-preferences'
import { entryOf, offerOf, providerOf, usd } from '../helpers/planner'

// The eligibility stage of the planner (docs/routing.md "Provider preferences"): each preference's exclusion and its
// reason, on plain offers.

const a = providerOf('a')
const offer = offerOf(a, { id: 'acme/chat', pricing: usd('0.000002'), supportedParameters: ['temperature'], quantization: 'FP8' })
const why = (preferences: NonNullable<ProviderPreferences>, parameters: string[] = [], promptTokens?: number, of = offer) =>
  exclusionOf(of, readPreferences(preferences, parameters), promptTokens)

describe('eligibility: why a preference excludes an offer', () => {
  it('keeps an offer no preference excludes', () => {
    expect(why({})).toBeUndefined()
    expect(why({ only: ['A'], order: ['a'], allow_fallbacks: false, max_price: { prompt: '2' }, quantizations: ['fp8'] })).toBeUndefined()
  })

  it('ignore, only and order without fallbacks compare slugs case-insensitively', () => {
    expect(why({ ignore: ['A'] })).toEqual(['ignore', 'ignored by provider.ignore'])
    expect(why({ only: ['b'] })).toEqual(['only', 'not in provider.only'])
    expect(why({ only: [] })).toEqual(['only', 'not in provider.only'])
    expect(why({ order: ['b'], allow_fallbacks: false })).toEqual(['order', 'not in provider.order and fallbacks are off'])
    expect(why({ order: ['b'] })).toBeUndefined()
    expect(why({ allow_fallbacks: false })).toBeUndefined()
    // ignore is checked before only.
    expect(why({ ignore: ['a'], only: ['b'] })).toEqual(['ignore', 'ignored by provider.ignore'])
    // A provider's slug is compared lowercased too.
    const mixed = offerOf(providerOf('Zed'), { id: 'acme/chat' })
    expect(why({ only: ['zed'] }, [], undefined, mixed)).toBeUndefined()
    expect(why({ ignore: ['ZED'] }, [], undefined, mixed)).toEqual(['ignore', 'ignored by provider.ignore'])
  })

  it('require_parameters names every parameter the model lacks; a model that lists none is kept', () => {
    expect(why({ require_parameters: true }, ['temperature', 'tools', 'seed'])).toEqual(['require_parameters', 'does not support tools, seed'])
    expect(why({ require_parameters: false }, ['tools'])).toBeUndefined()
    expect(why({ require_parameters: true }, ['tools'], undefined, offerOf(a, { id: 'acme/chat' }))).toBeUndefined()
  })

  it('max_price compares prompt and completion per million tokens, exactly', () => {
    // 0.000002 per token is 2 per million.
    expect(why({ max_price: { prompt: '2' } })).toBeUndefined()
    expect(why({ max_price: { prompt: '1.999999' } })).toEqual(['max_price', 'prompt price is above provider.max_price.prompt'])
    expect(why({ max_price: { completion: '1' } })).toEqual(['max_price', 'completion price is above provider.max_price.completion'])
    expect(priceAboveMax(usd('0.000003'), { prompt: '5', completion: '2' })).toBe('completion')
    expect(priceAboveMax(usd('0.000003'), { prompt: null, completion: '3' })).toBeUndefined()
  })

  it('max_price compares the per-request and per-image prices as they are, in USD each', () => {
    const priced = { prompt: '0.000001', completion: '0.000002', request: '0.02', image: '0.0015' }
    expect(priceAboveMax(priced, { request: '0.02', image: '0.0015' })).toBeUndefined()
    expect(priceAboveMax(priced, { request: '0.019' })).toBe('request')
    expect(priceAboveMax(priced, { image: '0.001' })).toBe('image')
    expect(priceAboveMax({ prompt: '0.000001', completion: '0.000002' }, { request: '0', image: '0' })).toBeUndefined()
  })

  it('max_price reads the long-context prices of a prompt past their threshold, and says the prompt’s size', () => {
    const long = offerOf(a, {
      id: 'acme/chat',
      pricing: { ...usd('0.000001'), long_context: { above_prompt_tokens: 200_000, prompt: '0.000004' } },
    })
    expect(why({ max_price: { prompt: '2' } }, [], 200_000, long)).toBeUndefined()
    expect(why({ max_price: { prompt: '2' } }, [], 200_001, long)).toEqual([
      'max_price',
      'prompt price for a prompt of up to 200001 tokens is above provider.max_price.prompt',
    ])
    expect(why({ max_price: { completion: '2' } }, [], 200_001, long)).toBeUndefined()
  })

  it('zdr keeps only a policy that retains nothing; one that does not say counts as retaining', () => {
    const policy = (retainsPrompts?: boolean) => offerOf(a, { id: 'acme/chat' }, { retainsPrompts })
    expect(why({ zdr: true }, [], undefined, policy(false))).toBeUndefined()
    expect(why({ zdr: true }, [], undefined, policy(true))).toEqual(['zdr', 'excluded by provider.zdr: its data policy lets it retain prompts'])
    expect(why({ zdr: true }, [], undefined, policy(undefined))).toEqual([
      'zdr',
      'excluded by provider.zdr: its data policy does not say whether it retains prompts',
    ])
    expect(why({ zdr: false }, [], undefined, policy(true))).toBeUndefined()
  })

  it('data_collection "deny" keeps only a policy that does not train; one that does not say counts as training', () => {
    const policy = (training?: boolean) => offerOf(a, { id: 'acme/chat' }, { training, retainsPrompts: false })
    expect(why({ data_collection: 'deny' }, [], undefined, policy(false))).toBeUndefined()
    expect(why({ data_collection: 'deny' }, [], undefined, policy(true))).toEqual([
      'data_collection',
      'excluded by provider.data_collection "deny": its data policy lets it train on prompts',
    ])
    expect(why({ data_collection: 'deny', zdr: true }, [], undefined, policy(undefined))).toEqual([
      'data_collection',
      'excluded by provider.data_collection "deny": its data policy does not say whether it trains on prompts',
    ])
    expect(why({ data_collection: 'allow' }, [], undefined, policy(true))).toBeUndefined()
  })

  it('quantizations compares case-insensitively; an offer that declares none serves "unknown"', () => {
    expect(why({ quantizations: ['bf16', 'fp8'] })).toBeUndefined()
    expect(why({ quantizations: ['BF16', 'int4'] })).toEqual(['quantizations', 'excluded by provider.quantizations: it serves fp8, not bf16, int4'])
    const undeclared = offerOf(a, { id: 'acme/chat' })
    expect(why({ quantizations: ['fp8'] }, [], undefined, undeclared)).toEqual([
      'quantizations',
      'excluded by provider.quantizations: it serves an undeclared quantization (unknown), not fp8',
    ])
    expect(why({ quantizations: ['unknown'] }, [], undefined, undeclared)).toBeUndefined()
    expect(why({ quantizations: [] }, [], undefined, undeclared)).toBeUndefined()
  })
})

describe('eligibility: the offers of the request', () => {
  const b = providerOf('b')
  const e = providerOf('e', { embed: true })
  const chat = entryOf('acme/chat', [
    offerOf(a, { id: 'acme/chat' }),
    offerOf(b, { id: 'acme/chat' }),
    offerOf(e, { id: 'acme/chat', endpoints: ['/embeddings'] }),
  ])
  const other = entryOf('acme/other', [offerOf(b, { id: 'acme/other' })])

  it('keeps each model’s offers apart, skips one of another capability silently, and lists every exclusion in order', () => {
    const { offers, leftOut } = eligibleOffers({ capability: 'chat' }, [chat, other], readPreferences({ ignore: ['b'] }))
    expect(offers.map((own) => own.map((c) => `${c.offer.provider.slug} ${c.entry.id}`))).toEqual([['a acme/chat'], []])
    expect(leftOut).toEqual([
      { provider: 'b', model: 'acme/chat', preference: 'ignore', reason: 'ignored by provider.ignore' },
      { provider: 'b', model: 'acme/other', preference: 'ignore', reason: 'ignored by provider.ignore' },
    ])
  })

  it('leaves out an offer `accept` refuses with no preference named, before its preferences are read', () => {
    const { offers, leftOut } = eligibleOffers({ capability: 'chat', accept: (o) => o.provider.slug !== 'a' }, [chat], readPreferences({ only: ['b'] }))
    expect(offers[0].map((c) => c.offer.provider.slug)).toEqual(['b'])
    expect(leftOut).toEqual([{ provider: 'a', model: 'acme/chat', reason: 'cannot serve this request' }])
  })
})
