import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropic, gemini, hostedProvider, knownModels, openai, type ProviderModel } from '../../src/index'
import { startGateway, type TestGateway } from '../helpers/server'

// The built-in catalogue's data as corrected on 2026-11-26 (issue 15): prices in USD per token, context lengths,
// retirement dates and replacements, efforts, output limits, announced price changes, and a source for every entry.

const all: ProviderModel[] = Object.values(knownModels).flat()
const byId = (id: string, provider?: string): ProviderModel => {
  const list = provider ? knownModels[provider] : all
  const found = list.filter((m) => m.id === id)
  expect(found, `${provider ?? 'catalogue'}: ${id}`).toHaveLength(1)
  return found[0]
}
const DAY = /^\d{4}-\d{2}-\d{2}$/

describe('the built-in catalogue data (checked 2026-11-26)', () => {
  it('prices long prompts as the providers do: GPT-6 past 272K tokens, Gemini Pro past 200K', () => {
    expect(byId('openai/gpt-6.1-sol').pricing.long_context).toEqual({
      above_prompt_tokens: 272_000,
      prompt: '0.000004',
      completion: '0.000015',
      input_cache_read: '0.0000002',
    })
    expect(byId('openai/gpt-6.1-terra').pricing.long_context).toEqual({
      above_prompt_tokens: 272_000,
      prompt: '0.000002',
      completion: '0.0000075',
      input_cache_read: '0.0000001',
    })
    expect(byId('openai/gpt-6-luna').pricing.long_context).toEqual({
      above_prompt_tokens: 272_000,
      prompt: '0.0000002',
      completion: '0.00000075',
      input_cache_read: '0.00000002',
    })
    expect(byId('google/gemini-3.1-pro-preview').pricing.long_context).toEqual({
      above_prompt_tokens: 200_000,
      prompt: '0.000004',
      completion: '0.000018',
      input_cache_read: '0.0000004',
    })
    expect(byId('google/gemini-2.5-pro').pricing.long_context).toEqual({
      above_prompt_tokens: 200_000,
      prompt: '0.0000025',
      completion: '0.000015',
      input_cache_read: '0.00000025',
    })
  })

  it('gives every entry a source with a page and the day it was checked', () => {
    expect(all.length).toBeGreaterThan(40)
    for (const m of all) {
      expect(m.source, m.id).toBeDefined()
      expect(m.source!.url, m.id).toMatch(/^https:\/\/\S+$/)
      expect(m.source!.checked, m.id).toMatch(DAY)
      // The image models were added (and their prices checked) the day after the audit (docs/images.md).
      expect(m.source!.checked, m.id).toBe(m.outputModalities?.includes('image') ? '2026-11-27' : '2026-11-26')
      if (m.source!.note !== undefined) expect(m.source!.note.length, m.id).toBeGreaterThan(0)
    }
  })

  it('writes dates as YYYY-MM-DD and names only replacements that are in the catalogue and not retiring', () => {
    for (const m of all) {
      if (m.expirationDate) expect(m.expirationDate, m.id).toMatch(DAY)
      for (const change of m.priceChanges ?? []) expect(change.from, m.id).toMatch(DAY)
      if (m.replacement) {
        expect(m.expirationDate, `${m.id} has a replacement but no expiration`).toBeDefined()
        const offers = all.filter((r) => r.id === m.replacement)
        expect(offers.length, `${m.id} → ${m.replacement}`).toBeGreaterThan(0)
        expect(
          offers.every((r) => r.expirationDate === undefined),
          `${m.replacement} retires too`,
        ).toBe(true)
      }
    }
  })

  it('prices Mistral Large 3 and Small 4, and the -latest aliases at the same prices', () => {
    const mistral = (id: string) => byId(id, 'mistral')
    expect(mistral('mistralai/mistral-large-2512')).toMatchObject({
      upstreamId: 'mistral-large-2512',
      contextLength: 262_144,
      pricing: { prompt: '0.0000005', completion: '0.0000015', currency: 'USD' },
    })
    expect(mistral('mistralai/mistral-large')).toMatchObject({
      upstreamId: 'mistral-large-latest',
      contextLength: 262_144,
      pricing: { prompt: '0.0000005', completion: '0.0000015', currency: 'USD' },
    })
    expect(mistral('mistralai/mistral-small-2603')).toMatchObject({
      upstreamId: 'mistral-small-2603',
      contextLength: 262_144,
      pricing: { prompt: '0.00000015', completion: '0.0000006', currency: 'USD' },
    })
    expect(mistral('mistralai/mistral-small')).toMatchObject({
      upstreamId: 'mistral-small-latest',
      contextLength: 262_144,
      pricing: { prompt: '0.00000015', completion: '0.0000006', currency: 'USD' },
    })
    for (const m of knownModels.mistral) expect(m.expirationDate, m.id).toBeUndefined()
  })

  it('retires DeepSeek’s old names on 2026-07-24 without a replacement, and leaves its yuan-priced model out', () => {
    expect(knownModels.deepseek.map((m) => [m.id, m.upstreamId, m.expirationDate, m.replacement])).toEqual([
      ['deepseek/deepseek-chat', 'deepseek-chat', '2026-07-24', undefined],
      ['deepseek/deepseek-r1', 'deepseek-reasoner', '2026-07-24', undefined],
    ])
    expect(all.filter((m) => /deepseek-flash/.test(m.upstreamId ?? m.id))).toEqual([])
    expect(all.every((m) => (m.pricing.currency ?? 'USD') === 'USD')).toBe(true)
  })

  it('ends Groq’s Llama offers on 2026-08-16 and keeps Llama 3.3 70B on Together and Fireworks', () => {
    expect(knownModels.groq.map((m) => [m.id, m.expirationDate])).toEqual([
      ['meta-llama/llama-3.3-70b-instruct', '2026-08-16'],
      ['meta-llama/llama-3.1-8b-instruct', '2026-08-16'],
    ])
    for (const provider of ['together', 'fireworks']) {
      const llama = byId('meta-llama/llama-3.3-70b-instruct', provider)
      expect(llama.expirationDate, provider).toBeUndefined()
      expect(llama.source!.note, provider).toMatch(/unsettled/i)
    }
    expect(all.filter((m) => m.id === 'meta-llama/llama-3.1-8b-instruct').every((m) => m.expirationDate === '2026-08-16')).toBe(true)
    const grok = byId('x-ai/grok-3-mini', 'xai')
    expect([grok.expirationDate, grok.replacement]).toEqual(['2026-02-28', undefined])
  })

  it('dates OpenAI’s retirements and names their substitutes', () => {
    const retiring = knownModels.openai.filter((m) => m.expirationDate && !m.endpoints).map((m) => [m.id, m.expirationDate, m.replacement])
    expect(retiring).toEqual([
      ['openai/gpt-5', '2026-12-11', 'openai/gpt-6.1-sol'],
      ['openai/gpt-5-mini', '2026-12-11', 'openai/gpt-6.1-terra'],
      ['openai/gpt-5-nano', '2026-12-11', 'openai/gpt-6-luna'],
      ['openai/gpt-4.1', '2027-01-14', 'openai/gpt-6-luna'],
      ['openai/gpt-4.1-mini', '2027-01-14', 'openai/gpt-6-luna'],
      ['openai/gpt-4.1-nano', '2026-10-23', 'openai/gpt-6-luna'],
      ['openai/gpt-4o', '2027-01-14', 'openai/gpt-6-luna'],
      ['openai/gpt-4o-mini', '2027-01-14', 'openai/gpt-6-luna'],
      ['openai/o4-mini', '2026-10-23', 'openai/gpt-6.1-terra'],
      ['openai/o3', '2026-12-11', 'openai/gpt-6.1-sol'],
    ])
    // Replacements OpenAI did not name outright are marked as derived.
    for (const id of ['openai/gpt-5-nano', 'openai/gpt-4.1-nano', 'openai/o4-mini', 'openai/o3']) expect(byId(id).source!.note, id).toMatch(/derived/)
  })

  it('prices the GPT-6 substitutes at OpenAI’s list prices, with their limits and efforts', () => {
    expect(byId('openai/gpt-6.1-sol')).toMatchObject({
      upstreamId: 'gpt-6.1-sol',
      contextLength: 1_050_000,
      maxCompletionTokens: 128_000,
      pricing: { prompt: '0.000002', completion: '0.00001', input_cache_read: '0.0000001', currency: 'USD' },
      reasoning: { efforts: ['low', 'medium', 'high', 'xhigh', 'max'] },
      releaseDate: '2026-09-29',
    })
    expect(byId('openai/gpt-6.1-sol').supportedParameters).not.toContain('tools')
    expect(byId('openai/gpt-6.1-terra')).toMatchObject({
      upstreamId: 'gpt-6.1-terra',
      contextLength: 1_050_000,
      maxCompletionTokens: 128_000,
      pricing: { prompt: '0.000001', completion: '0.000005', input_cache_read: '0.00000005', currency: 'USD' },
      reasoning: { efforts: ['none', 'low', 'medium', 'high', 'xhigh', 'max'] },
      releaseDate: '2026-10-26',
    })
    expect(byId('openai/gpt-6-luna')).toMatchObject({
      upstreamId: 'gpt-6-luna',
      contextLength: 1_050_000,
      maxCompletionTokens: 128_000,
      pricing: { prompt: '0.0000001', completion: '0.0000005', input_cache_read: '0.00000001', currency: 'USD' },
      reasoning: { efforts: ['none', 'low', 'medium', 'high', 'xhigh', 'max'] },
      releaseDate: '2026-09-22',
    })
    // Their long-context surcharge cannot be billed by a flat price: each says so.
    for (const id of ['openai/gpt-6.1-sol', 'openai/gpt-6.1-terra', 'openai/gpt-6-luna']) {
      expect(byId(id).expirationDate, id).toBeUndefined()
      expect(byId(id).source!.note, id).toMatch(/272K/)
    }
  })

  it('retires OpenAI’s speech models on 2027-01-06 and its transcription models on 2027-02-26, keeping their prices', () => {
    const audio = knownModels.openai.filter((m) => m.endpoints?.some((e) => e.startsWith('/audio/'))).map((m) => [m.id, m.expirationDate, m.replacement])
    expect(audio).toEqual([
      ['openai/tts-1', '2027-01-06', undefined],
      ['openai/tts-1-hd', '2027-01-06', undefined],
      ['openai/gpt-4o-mini-tts', '2027-01-06', undefined],
      ['openai/whisper-1', '2027-02-26', undefined],
      ['openai/gpt-4o-transcribe', '2027-02-26', undefined],
      ['openai/gpt-4o-mini-transcribe', '2027-02-26', undefined],
    ])
    expect(byId('openai/gpt-4o-transcribe').pricing).toMatchObject({ prompt: '0.0000025', audio: '0.000006', completion: '0.00001' })
    expect(byId('openai/gpt-4o-mini-transcribe').pricing).toMatchObject({ prompt: '0.00000125', audio: '0.000003', completion: '0.000005' })
    expect(byId('openai/gpt-4o-transcribe').source!.note).toMatch(/LiteLLM/)
  })

  it('bills Gemini 2.5 Pro and Flash at their successors’ prices from 2026-12-01, and adds those successors', () => {
    const google = (id: string) => byId(id, 'google-ai-studio')
    // The ids keep answering (with the newer model), so they do not expire.
    expect([google('google/gemini-2.5-pro').expirationDate, google('google/gemini-2.5-flash').expirationDate]).toEqual([undefined, undefined])
    expect(google('google/gemini-2.5-pro')).toMatchObject({
      pricing: { prompt: '0.00000125', completion: '0.00001', input_cache_read: '0.000000125' },
      priceChanges: [
        { from: '2026-12-01', pricing: { prompt: '0.00000075', completion: '0.00000375', input_cache_read: '0.000000075', currency: 'USD' } },
        { from: '2027-01-01', pricing: { prompt: '0.0000015', completion: '0.0000075', input_cache_read: '0.00000015', currency: 'USD' } },
      ],
    })
    expect(google('google/gemini-2.5-flash')).toMatchObject({
      priceChanges: [{ from: '2026-12-01', pricing: { prompt: '0.0000003', completion: '0.0000025', input_cache_read: '0.00000003', currency: 'USD' } }],
    })
    expect(google('google/gemini-3.8-flash')).toMatchObject({
      upstreamId: 'gemini-3.8-flash',
      contextLength: 1_048_576,
      maxCompletionTokens: 65_536,
      pricing: { prompt: '0.00000075', completion: '0.00000375', input_cache_read: '0.000000075' },
      priceChanges: [{ from: '2027-01-01', pricing: { prompt: '0.0000015', completion: '0.0000075', input_cache_read: '0.00000015' } }],
      reasoning: { efforts: ['low', 'medium', 'high'] },
    })
    expect(google('google/gemini-3.5-flash-lite')).toMatchObject({
      upstreamId: 'gemini-3.5-flash-lite',
      contextLength: 1_048_576,
      maxCompletionTokens: 65_536,
      pricing: { prompt: '0.0000003', completion: '0.0000025', input_cache_read: '0.00000003' },
    })
    expect(google('google/gemini-3.5-flash')).toMatchObject({
      maxCompletionTokens: 65_536,
      pricing: { prompt: '0.0000015', completion: '0.000009' },
      reasoning: { efforts: ['minimal', 'low', 'medium', 'high'] },
    })
  })

  it('gives the Claude 5.x models the efforts low to max', () => {
    for (const m of knownModels.anthropic) {
      if (/claude-(fable|opus|sonnet)-5/.test(m.id)) expect(m.reasoning?.efforts, m.id).toEqual(['low', 'medium', 'high', 'xhigh', 'max'])
      else expect(m.reasoning?.efforts, m.id).toBeUndefined()
    }
    expect(knownModels.anthropic.filter((m) => m.reasoning?.efforts).length).toBe(5)
  })
})

describe('GET /api/v1/models with the presets, on 2026-11-26', () => {
  let t: TestGateway
  const nowhere = 'http://127.0.0.1:9/v1'

  beforeAll(async () => {
    t = await startGateway({
      clock: () => Date.parse('2026-11-26T12:00:00Z'),
      providers: [
        openai({ baseURL: nowhere }),
        anthropic({ baseURL: 'http://127.0.0.1:9' }),
        gemini({ baseURL: 'http://127.0.0.1:9' }),
        ...(['groq', 'together', 'fireworks', 'mistral', 'deepseek', 'xai'] as const).map((slug) => hostedProvider(slug, { baseURL: nowhere })),
      ],
    })
  })
  afterAll(async () => {
    await t.close()
  })

  const listed = async () => {
    const res = await t.request('/api/v1/models')
    expect(res.status).toBe(200)
    return new Map(((await res.json()).data as any[]).map((m) => [m.id, m]))
  }

  it('shows the corrected prices, context lengths, output limits and efforts', async () => {
    const models = await listed()
    const shows = (id: string, prompt: string, completion: string, context: number) => {
      const m = models.get(id)
      expect(m, id).toBeDefined()
      expect([m.pricing.prompt, m.pricing.completion, m.context_length], id).toEqual([prompt, completion, context])
      return m
    }
    shows('mistralai/mistral-large-2512', '0.0000005', '0.0000015', 262_144)
    shows('mistralai/mistral-large', '0.0000005', '0.0000015', 262_144)
    shows('mistralai/mistral-small-2603', '0.00000015', '0.0000006', 262_144)
    shows('mistralai/mistral-small', '0.00000015', '0.0000006', 262_144)
    expect(shows('openai/gpt-6.1-sol', '0.000002', '0.00001', 1_050_000).top_provider.max_completion_tokens).toBe(128_000)
    expect(shows('openai/gpt-6.1-terra', '0.000001', '0.000005', 1_050_000).reasoning.supported_efforts).toEqual([
      'none',
      'low',
      'medium',
      'high',
      'xhigh',
      'max',
    ])
    expect(shows('openai/gpt-6-luna', '0.0000001', '0.0000005', 1_050_000).pricing.input_cache_read).toBe('0.00000001')
    // Before 2026-12-01 Gemini 2.5 Pro keeps its own price.
    shows('google/gemini-2.5-pro', '0.00000125', '0.00001', 1_048_576)
    shows('google/gemini-3.8-flash', '0.00000075', '0.00000375', 1_048_576)
    const flash = shows('google/gemini-3.5-flash', '0.0000015', '0.000009', 1_048_576)
    expect([flash.top_provider.max_completion_tokens, flash.reasoning.supported_efforts]).toEqual([65_536, ['minimal', 'low', 'medium', 'high']])
    expect(models.get('anthropic/claude-opus-5.5').reasoning.supported_efforts).toEqual(['low', 'medium', 'high', 'xhigh', 'max'])
    // Llama 3.3 70B now comes from Together (cheapest) and Fireworks only.
    const llama = shows('meta-llama/llama-3.3-70b-instruct', '0.00000088', '0.00000088', 131_072)
    expect(llama.providers.map((p: any) => p.slug).sort()).toEqual(['fireworks', 'together'])
  })
})
