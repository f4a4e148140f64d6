import type { ProviderModel } from '../providers/types'

/*
 * Google's Gemini models on the Gemini API (Google AI Studio), with Standard (pay-as-you-go) list prices in USD per
 * token for text / image / video input. Source: Google's published Gemini Developer API pricing page
 * (ai.google.dev/gemini-api/docs/pricing) and model pages (ai.google.dev/gemini-api/docs/models); this file was
 * written on 2026-11-25 on a machine without web access, from those pages as last seen, so check the live pages
 * before charging real money, and override prices in `createGateway({ modelOverrides })`.
 *
 * What the gateway's pricing cannot express (and is therefore billed at the listed base rate):
 * - Tiered prices for prompts longer than 200k tokens: Gemini 3.1 Pro Preview $4.00 in / $18.00 out / $0.40 cached
 *   (instead of $2.00 / $12.00 / $0.20); Gemini 2.5 Pro $2.50 in / $15.00 out / $0.25 cached (instead of
 *   $1.25 / $10.00 / $0.125) per million tokens.
 * - Audio input, priced higher than text per token: Gemini 3 Flash Preview $1.00 (cached $0.10), Gemini 2.5 Flash
 *   $1.00 (cached $0.10), Gemini 2.5 Flash-Lite $0.30 (cached $0.03) per million tokens.
 * - Context cache storage (per token-hour) and Google Search grounding, which this provider does not use.
 * Thinking tokens are billed as output tokens (the gateway counts them in completion_tokens), as Google prices them.
 */

const perMillion = (usd: number) => (usd / 1_000_000).toFixed(12).replace(/0+$/, '').replace(/\.$/, '')
const price = (input: number, output: number, cachedInput: number): ProviderModel['pricing'] => ({
  prompt: perMillion(input),
  completion: perMillion(output),
  input_cache_read: perMillion(cachedInput),
  currency: 'USD',
})

/** Request parameters the Gemini provider translates for every Gemini model (see src/providers/gemini-translate.ts). */
export const GEMINI_PARAMETERS = [
  'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'top_k', 'stop', 'seed',
  'response_format', 'structured_outputs', 'tools', 'tool_choice', 'reasoning', 'include_reasoning',
]
const ALL_EFFORTS = ['minimal', 'low', 'medium', 'high']
const MODALITIES = ['text', 'image', 'audio', 'file']
const docs = (model: string) => `https://ai.google.dev/gemini-api/docs/models#${model}`
const CONTEXT = 1_048_576

/** The Gemini models `gemini()` serves by default. */
export const geminiModels: ProviderModel[] = [
  {
    id: 'google/gemini-3.5-flash', upstreamId: 'gemini-3.5-flash', name: 'Google: Gemini 3.5 Flash',
    description: 'Google’s Flash model of the Gemini 3.5 generation, built for agentic and coding loops at Flash speed.',
    contextLength: CONTEXT, maxCompletionTokens: 65_535, pricing: price(1.5, 9, 0.15), inputModalities: MODALITIES,
    supportedParameters: GEMINI_PARAMETERS, reasoning: { mandatory: true, efforts: ['low', 'medium', 'high'], supportsMaxTokens: true },
    tags: ['programming', 'technology'], created: 1779148800, releaseDate: '2026-05-19', knowledgeCutoff: '2025-01-31', detailsUrl: docs('gemini-3.5-flash'),
  },
  {
    id: 'google/gemini-3.1-pro-preview', upstreamId: 'gemini-3.1-pro-preview', name: 'Google: Gemini 3.1 Pro Preview',
    description: 'Google’s most capable Gemini 3 model for complex reasoning, coding and long multimodal context (preview).',
    contextLength: CONTEXT, maxCompletionTokens: 65_536, pricing: price(2, 12, 0.2), inputModalities: MODALITIES,
    supportedParameters: GEMINI_PARAMETERS, reasoning: { mandatory: true, efforts: ['low', 'medium', 'high'], supportsMaxTokens: true },
    tags: ['programming', 'science', 'academia'], created: 1771459200, releaseDate: '2026-02-19', knowledgeCutoff: '2025-01-31', detailsUrl: docs('gemini-3.1-pro-preview'),
  },
  {
    id: 'google/gemini-3-flash-preview', upstreamId: 'gemini-3-flash-preview', name: 'Google: Gemini 3 Flash Preview',
    description: 'Gemini 3 reasoning at Flash speed and price (preview).',
    contextLength: CONTEXT, maxCompletionTokens: 65_536, pricing: price(0.5, 3, 0.05), inputModalities: MODALITIES,
    supportedParameters: GEMINI_PARAMETERS, reasoning: { mandatory: true, efforts: ALL_EFFORTS, supportsMaxTokens: true },
    tags: ['programming', 'technology'], created: 1765929600, releaseDate: '2025-12-17', knowledgeCutoff: '2025-01-31', detailsUrl: docs('gemini-3-flash-preview'),
  },
  {
    id: 'google/gemini-2.5-pro', upstreamId: 'gemini-2.5-pro', name: 'Google: Gemini 2.5 Pro',
    description: 'Google’s Gemini 2.5 thinking model for complex problems in code, math and science, over a 1M-token context.',
    contextLength: CONTEXT, maxCompletionTokens: 65_536, pricing: price(1.25, 10, 0.125), inputModalities: MODALITIES,
    supportedParameters: GEMINI_PARAMETERS, reasoning: { mandatory: true, efforts: ALL_EFFORTS, supportsMaxTokens: true },
    tags: ['programming', 'science', 'academia'], created: 1750118400, releaseDate: '2025-06-17', knowledgeCutoff: '2025-01-31', detailsUrl: docs('gemini-2.5-pro'),
  },
  {
    id: 'google/gemini-2.5-flash', upstreamId: 'gemini-2.5-flash', name: 'Google: Gemini 2.5 Flash',
    description: 'Google’s price-performance Gemini 2.5 model with controllable thinking.',
    contextLength: CONTEXT, maxCompletionTokens: 65_536, pricing: price(0.3, 2.5, 0.03), inputModalities: MODALITIES,
    supportedParameters: GEMINI_PARAMETERS, reasoning: { efforts: ALL_EFFORTS, supportsMaxTokens: true },
    tags: ['programming', 'translation', 'technology'], created: 1750118400, releaseDate: '2025-06-17', knowledgeCutoff: '2025-01-31', detailsUrl: docs('gemini-2.5-flash'),
  },
  {
    id: 'google/gemini-2.5-flash-lite', upstreamId: 'gemini-2.5-flash-lite', name: 'Google: Gemini 2.5 Flash-Lite',
    description: 'Google’s fastest and cheapest Gemini 2.5 model, for high-volume work; thinking is off unless asked for.',
    contextLength: CONTEXT, maxCompletionTokens: 65_536, pricing: price(0.1, 0.4, 0.01), inputModalities: MODALITIES,
    supportedParameters: GEMINI_PARAMETERS, reasoning: { efforts: ALL_EFFORTS, supportsMaxTokens: true },
    tags: ['translation', 'marketing', 'trivia'], created: 1753142400, releaseDate: '2025-07-22', knowledgeCutoff: '2025-01-31', detailsUrl: docs('gemini-2.5-flash-lite'),
  },
]
