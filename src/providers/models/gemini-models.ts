import { embeddingModels } from './embedding-models'
import { geminiImageModels } from './gemini-image-models'
import type { ProviderModel } from '../../contracts'

/*
 * Google's Gemini models on the Gemini API (Google AI Studio), with Standard (pay-as-you-go) list prices in USD per
 * token for text / image / video input. Checked on 2026-11-26 against Google's pricing page
 * (ai.google.dev/gemini-api/docs/pricing, as transcribed verbatim on 2026-10-07 by api-evangelist/deepmind) and its
 * deprecations page (ai.google.dev/gemini-api/docs/deprecations, as quoted on 2026-11-10); each entry's `source` says
 * what was read and what is derived. Override prices in `createGateway({ modelOverrides })` when your contract differs.
 *
 * From 2026-12-01 Google answers `gemini-2.5-pro` with Gemini 3.8 Flash and `gemini-2.5-flash` with Gemini 3.5
 * Flash-Lite, billed at those models' rates: both entries carry the new prices as `priceChanges` (the ids keep
 * answering, so they do not expire).
 *
 * Prompts longer than 200k tokens are billed at Google's higher rates (`pricing.long_context`): Gemini 3.1 Pro Preview
 * $4.00 in / $18.00 out / $0.40 cached (instead of $2.00 / $12.00 / $0.20); Gemini 2.5 Pro $2.50 in / $15.00 out /
 * $0.25 cached (instead of $1.25 / $10.00 / $0.125) per million tokens (until its price change of 2026-12-01).
 *
 * What the gateway's pricing cannot express (and is therefore billed at the listed base rate):
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
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'top_k',
  'stop',
  'seed',
  'response_format',
  'structured_outputs',
  'tools',
  'tool_choice',
  'reasoning',
  'include_reasoning',
]
const ALL_EFFORTS = ['minimal', 'low', 'medium', 'high']
// Google's rates for a whole request whose prompt is longer than 200K tokens.
const longContext = (input: number, output: number, cachedInput: number) => ({
  above_prompt_tokens: 200_000,
  prompt: perMillion(input),
  completion: perMillion(output),
  input_cache_read: perMillion(cachedInput),
})
const LEVELS = ['low', 'medium', 'high']
const PRICING = 'https://ai.google.dev/gemini-api/docs/pricing'
const DEPRECATIONS = 'https://ai.google.dev/gemini-api/docs/deprecations'
const source = (url: string, note: string): ProviderModel['source'] => ({ url, checked: '2026-11-26', note })
const epoch = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000
// Gemini 3.8 Flash: $0.75 / $3.75 (cache read $0.075) through 2026-12-31, then $1.50 / $7.50 (Google's pricing page;
// LiteLLM's launch post gives the cache read). The cache read from 2027 is derived: 10% of input, as Google prices them.
const FLASH_3_8 = price(0.75, 3.75, 0.075)
const FLASH_3_8_FROM_2027 = price(1.5, 7.5, 0.15)
const FLASH_3_8_NOTE =
  'Gemini 3.8 Flash’s launch price ends 2026-12-31; from 2027-01-01 Google’s page gives $1.50 / $7.50; the cache read ($0.15) is derived as 10% of input.'
const MODALITIES = ['text', 'image', 'audio', 'file']
const docs = (model: string) => `https://ai.google.dev/gemini-api/docs/models#${model}`
const CONTEXT = 1_048_576

/** The Gemini models `gemini()` serves by default. */
export const geminiModels: ProviderModel[] = [
  {
    id: 'google/gemini-3.8-flash',
    upstreamId: 'gemini-3.8-flash',
    name: 'Google: Gemini 3.8 Flash',
    description: 'The Gemini 3 Flash model of September 2026, with customisable thinking levels; answers gemini-2.5-pro from 2026-12-01.',
    contextLength: CONTEXT,
    maxCompletionTokens: 65_536,
    pricing: FLASH_3_8,
    inputModalities: MODALITIES,
    supportedParameters: GEMINI_PARAMETERS,
    reasoning: { mandatory: true, efforts: LEVELS, supportsMaxTokens: true },
    tags: ['programming', 'technology'],
    created: epoch('2026-09-02'),
    releaseDate: '2026-09-02',
    detailsUrl: docs('gemini-3.8-flash'),
    priceChanges: [{ from: '2027-01-01', pricing: FLASH_3_8_FROM_2027, note: FLASH_3_8_NOTE }],
    source: source(
      PRICING,
      '$0.75 / $3.75 through 2026-12-31, $1.50 / $7.50 from 2027-01-01 (Google’s page, 2026-10-07 transcription); cache read $0.075, 1,048,576 context, 65,536 output (LiteLLM’s launch post, BerriAI/litellm#39357); thinking levels low, medium, high (apiyi.com); released 2026-09-02 (deprecations page).',
    ),
  },
  {
    id: 'google/gemini-3.5-flash-lite',
    upstreamId: 'gemini-3.5-flash-lite',
    name: 'Google: Gemini 3.5 Flash-Lite',
    description:
      'Google’s low-latency, low-cost Gemini 3.5 model for high-volume work; minimal thinking unless asked; answers gemini-2.5-flash from 2026-12-01.',
    contextLength: CONTEXT,
    maxCompletionTokens: 65_536,
    pricing: price(0.3, 2.5, 0.03),
    inputModalities: MODALITIES,
    supportedParameters: GEMINI_PARAMETERS,
    reasoning: { mandatory: true, efforts: ALL_EFFORTS, supportsMaxTokens: true },
    tags: ['translation', 'marketing', 'trivia'],
    created: epoch('2026-07-21'),
    releaseDate: '2026-07-21',
    detailsUrl: docs('gemini-3.5-flash-lite'),
    source: source(
      PRICING,
      '$0.30 (text / image / video / audio) / $2.50 per M (Google’s page, 2026-10-07 transcription); cache read $0.03 (apiyi.com; 10% of input, as Google prices them); 1,048,576 input and 65,536 output tokens (Google’s model page); thinking levels minimal (default), low, medium, high (Google Cloud’s model page); released 2026-07-21.',
    ),
  },
  {
    id: 'google/gemini-3.5-flash',
    upstreamId: 'gemini-3.5-flash',
    name: 'Google: Gemini 3.5 Flash',
    description: 'Google’s Flash model of the Gemini 3.5 generation, built for agentic and coding loops at Flash speed.',
    contextLength: CONTEXT,
    maxCompletionTokens: 65_536,
    pricing: price(1.5, 9, 0.15),
    inputModalities: MODALITIES,
    supportedParameters: GEMINI_PARAMETERS,
    reasoning: { mandatory: true, efforts: ALL_EFFORTS, supportsMaxTokens: true },
    tags: ['programming', 'technology'],
    created: 1779148800,
    releaseDate: '2026-05-19',
    knowledgeCutoff: '2025-01-31',
    detailsUrl: docs('gemini-3.5-flash'),
    source: source(
      PRICING,
      '$1.50 / $9.00 per M (Google’s page, 2026-10-07 transcription); max output 65,536 (bearplex.com, from Google’s model page) and thinking levels minimal…high per the 2026-11-26 audit; the $0.15 cache read per the audit.',
    ),
  },
  {
    id: 'google/gemini-3.1-pro-preview',
    upstreamId: 'gemini-3.1-pro-preview',
    name: 'Google: Gemini 3.1 Pro Preview',
    description: 'Google’s most capable Gemini 3 model for complex reasoning, coding and long multimodal context (preview).',
    contextLength: CONTEXT,
    maxCompletionTokens: 65_536,
    pricing: { ...price(2, 12, 0.2), long_context: longContext(4, 18, 0.4) },
    inputModalities: MODALITIES,
    supportedParameters: GEMINI_PARAMETERS,
    reasoning: { mandatory: true, efforts: ['low', 'medium', 'high'], supportsMaxTokens: true },
    tags: ['programming', 'science', 'academia'],
    created: 1771459200,
    releaseDate: '2026-02-19',
    knowledgeCutoff: '2025-01-31',
    detailsUrl: docs('gemini-3.1-pro-preview'),
    source: source(
      PRICING,
      '$2.00 / $12.00 for prompts up to 200K tokens, $4.00 / $18.00 / $0.40 cached above (Google’s page, 2026-10-07 transcription); no shutdown date announced (deprecations page). The $0.20 cache read per the 2026-11-26 audit.',
    ),
  },
  {
    id: 'google/gemini-3-flash-preview',
    upstreamId: 'gemini-3-flash-preview',
    name: 'Google: Gemini 3 Flash Preview',
    description: 'Gemini 3 reasoning at Flash speed and price (preview).',
    contextLength: CONTEXT,
    maxCompletionTokens: 65_536,
    pricing: price(0.5, 3, 0.05),
    inputModalities: MODALITIES,
    supportedParameters: GEMINI_PARAMETERS,
    reasoning: { mandatory: true, efforts: ALL_EFFORTS, supportsMaxTokens: true },
    tags: ['programming', 'technology'],
    created: 1765929600,
    releaseDate: '2025-12-17',
    knowledgeCutoff: '2025-01-31',
    detailsUrl: docs('gemini-3-flash-preview'),
    source: source(
      DEPRECATIONS,
      'No shutdown date announced (deprecations page; recommended replacement gemini-3.5-flash). Prices per the 2026-11-26 audit (not on the transcribed part of the pricing page).',
    ),
  },
  {
    id: 'google/gemini-2.5-pro',
    upstreamId: 'gemini-2.5-pro',
    name: 'Google: Gemini 2.5 Pro',
    description: 'Google’s Gemini 2.5 thinking model for complex problems in code, math and science, over a 1M-token context.',
    contextLength: CONTEXT,
    maxCompletionTokens: 65_536,
    pricing: { ...price(1.25, 10, 0.125), long_context: longContext(2.5, 15, 0.25) },
    inputModalities: MODALITIES,
    supportedParameters: GEMINI_PARAMETERS,
    reasoning: { mandatory: true, efforts: ALL_EFFORTS, supportsMaxTokens: true },
    tags: ['programming', 'science', 'academia'],
    created: 1750118400,
    releaseDate: '2025-06-17',
    knowledgeCutoff: '2025-01-31',
    detailsUrl: docs('gemini-2.5-pro'),
    priceChanges: [
      { from: '2026-12-01', pricing: FLASH_3_8, note: 'From 2026-12-01 Google routes gemini-2.5-pro to gemini-3.8-flash, billed at its launch price.' },
      { from: '2027-01-01', pricing: FLASH_3_8_FROM_2027, note: FLASH_3_8_NOTE },
    ],
    source: source(
      DEPRECATIONS,
      'Retired 2026-12-01: requests are then answered by gemini-3.8-flash at its rates (deprecations page as quoted by aideprecations.com on 2026-11-10; Retell migrates it the same way). No end date for the routing is given, so no expiration. Unsettled: 3.8 Flash takes thinking levels low…high, not the budgets this entry advertises. Base prices $1.25 / $10.00 (Google’s page).',
    ),
  },
  {
    id: 'google/gemini-2.5-flash',
    upstreamId: 'gemini-2.5-flash',
    name: 'Google: Gemini 2.5 Flash',
    description: 'Google’s price-performance Gemini 2.5 model with controllable thinking.',
    contextLength: CONTEXT,
    maxCompletionTokens: 65_536,
    pricing: price(0.3, 2.5, 0.03),
    inputModalities: MODALITIES,
    supportedParameters: GEMINI_PARAMETERS,
    reasoning: { efforts: ALL_EFFORTS, supportsMaxTokens: true },
    tags: ['programming', 'translation', 'technology'],
    created: 1750118400,
    releaseDate: '2025-06-17',
    knowledgeCutoff: '2025-01-31',
    detailsUrl: docs('gemini-2.5-flash'),
    priceChanges: [
      {
        from: '2026-12-01',
        pricing: price(0.3, 2.5, 0.03),
        note: 'From 2026-12-01 Google routes gemini-2.5-flash to gemini-3.5-flash-lite, billed at its rates: the same text prices; audio input drops from $1.00 to $0.30.',
      },
    ],
    source: source(
      DEPRECATIONS,
      'Retired 2026-12-01: requests are then answered by gemini-3.5-flash-lite at its rates (deprecations page as quoted by aideprecations.com on 2026-11-10). No end date for the routing is given, so no expiration. Prices $0.30 / $2.50 (Google’s page).',
    ),
  },
  {
    id: 'google/gemini-2.5-flash-lite',
    upstreamId: 'gemini-2.5-flash-lite',
    name: 'Google: Gemini 2.5 Flash-Lite',
    description: 'Google’s fastest and cheapest Gemini 2.5 model, for high-volume work; thinking is off unless asked for.',
    contextLength: CONTEXT,
    maxCompletionTokens: 65_536,
    pricing: price(0.1, 0.4, 0.01),
    inputModalities: MODALITIES,
    supportedParameters: GEMINI_PARAMETERS,
    reasoning: { efforts: ALL_EFFORTS, supportsMaxTokens: true },
    tags: ['translation', 'marketing', 'trivia'],
    created: 1753142400,
    releaseDate: '2025-07-22',
    knowledgeCutoff: '2025-01-31',
    detailsUrl: docs('gemini-2.5-flash-lite'),
    source: source(
      PRICING,
      '$0.40 output (Google’s page, 2026-10-07 transcription); not deprecated, “remains available until further notice” (deprecations page as quoted by aideprecations.com). Input and cache read per the 2026-11-26 audit.',
    ),
  },
  ...geminiImageModels,
  ...embeddingModels.google,
]
