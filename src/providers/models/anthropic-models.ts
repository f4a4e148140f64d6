import type { ProviderModel } from '../../contracts'

/*
 * Anthropic's current Claude models with their published list prices (USD per token, standard tier: no batch, no fast
 * mode), context windows and output limits.
 *
 * Source: Anthropic's pricing page (platform.claude.com/docs/en/about-claude/pricing) and each model's overview page
 * (platform.claude.com/docs/en/models/…). Checked on 2026-11-26 by an audit against public sources, which found the
 * prices current and corrected the effort levels of the 5.x models (low, medium, high, xhigh, max); each entry's
 * `source` says so. Override prices with `createGateway({ models })` or `anthropic({ models })` when your contract
 * differs.
 *
 * - Cache writes: 5-minute writes at 1.25× input, 1-hour writes (`ttl: "1h"`, passed on by /messages served
 *   natively) at 2× input. Chat completions never ask for 1-hour writes.
 * - US-only inference (`inference_geo: "us"`) costs 1.1× every token price on models released from February 2026;
 *   fast mode (`speed: "fast"`) has no price here, so it is refused unless `modelOverrides` gives `speeds`.
 * - Claude Sonnet 5.5's cache reads were cut from $0.20 to $0.10 / MTok on 2026-10-07.
 * - Left out: Claude Haiku 5.5, whose price depends on the prompt's length (from $0.10 / $0.50 up to 100K prompt
 *   tokens, $0.50 / $2.50 above, on every token of the request), which a flat per-token price cannot bill exactly;
 *   Claude Mythos 5 / 5.1 (by invitation only); Claude Sonnet 4.5 (retired 2026-11-30); older models.
 * - Claude Fable 5.x, Opus 5.5 and Sonnet 5.5 reject forced tool use (`tool_choice: 'required'` or a named tool):
 *   the API answers 400, passed on as invalid_request. `auto` and `none` work on every model.
 * - API version 2026-10-21 removed `temperature`, `top_p` and `top_k`: none of these models lists them.
 * - `created` is the day Anthropic released the model (Opus 5.5 on 2026-09-22, Sonnet 5.5 on 2026-09-28, as dated by
 *   Anthropic's announcements and the release dates of Vercel AI Gateway's and Runware's model pages).
 */

/** USD per million tokens (as written on the pricing page) → USD per token, exactly ('6.25' → '0.00000625'). */
function perMillionTokens(usd: string): string {
  const [whole, fraction = ''] = usd.split('.')
  const digits = `${whole}${fraction}`.replace(/^0+(?=\d)/, '')
  const scale = fraction.length + 6
  const padded = digits.padStart(scale + 1, '0')
  const text = `${padded.slice(0, -scale)}.${padded.slice(-scale)}`.replace(/0+$/, '').replace(/\.$/, '')
  return text
}

/**
 * A model's prices (USD per million tokens, as on the pricing page): input, output, cache reads, 5-minute and 1-hour
 * cache writes. `usOnly`: the model bills US-only inference (`inference_geo: "us"`) at 1.1× every token price, as
 * every model released from February 2026 on does.
 */
const price = (input: string, output: string, cacheRead: string, cacheWrite5m: string, cacheWrite1h: string, usOnly = true): ProviderModel['pricing'] => ({
  prompt: perMillionTokens(input),
  completion: perMillionTokens(output),
  input_cache_read: perMillionTokens(cacheRead),
  input_cache_write: perMillionTokens(cacheWrite5m),
  input_cache_write_1h: perMillionTokens(cacheWrite1h),
  ...(usOnly ? { inference_geos: { us: '1.1' } } : {}),
  currency: 'USD',
})

const CLAUDE = [
  'max_tokens',
  'max_completion_tokens',
  'stop',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'structured_outputs',
  'reasoning',
  'include_reasoning',
  'user',
]
const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max']
const MODALITIES = ['text', 'image', 'file']
const docs = (page: string) => `https://platform.claude.com/docs/en/models/${page}/overview`
const epoch = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000
const PRICING_PAGE = 'https://platform.claude.com/docs/en/about-claude/pricing'
const source = (note: string): ProviderModel['source'] => ({ url: PRICING_PAGE, checked: '2026-11-26', note })
const AUDITED = 'Prices, context and output limits unchanged per the 2026-11-26 audit (not re-read line by line)'
const EFFORTS_NOTE = `${AUDITED}; effort levels low, medium, high, xhigh, max per the audit (the catalogue listed minimal…high).`

/** The current Claude models, served by the `anthropic()` provider. */
export const anthropicModels: ProviderModel[] = [
  {
    id: 'anthropic/claude-fable-5.2',
    upstreamId: 'claude-fable-5-2',
    name: 'Anthropic: Claude Fable 5.2',
    description: 'Anthropic’s model for demanding reasoning and long-horizon agentic work. Adaptive thinking, always on.',
    contextLength: 1_000_000,
    maxCompletionTokens: 128_000,
    pricing: price('8', '40', '0.20', '10', '16'),
    inputModalities: MODALITIES,
    supportedParameters: CLAUDE,
    reasoning: { mandatory: true, efforts: EFFORTS },
    tags: ['programming', 'science', 'academia'],
    created: epoch('2026-11-09'),
    releaseDate: '2026-11-09',
    knowledgeCutoff: '2026-06',
    detailsUrl: docs('fable-5-2'),
    source: source(EFFORTS_NOTE),
  },
  {
    id: 'anthropic/claude-fable-5.1',
    upstreamId: 'claude-fable-5-1',
    name: 'Anthropic: Claude Fable 5.1',
    description: 'The previous Fable model. Adaptive thinking, always on.',
    contextLength: 1_000_000,
    maxCompletionTokens: 128_000,
    pricing: price('10', '50', '0.25', '12.50', '20'),
    inputModalities: MODALITIES,
    supportedParameters: CLAUDE,
    reasoning: { mandatory: true, efforts: EFFORTS },
    tags: ['programming', 'science'],
    created: epoch('2026-09-01'),
    releaseDate: '2026-09-01',
    knowledgeCutoff: '2026-06',
    detailsUrl: docs('fable-5-1'),
    source: source(EFFORTS_NOTE),
  },
  {
    id: 'anthropic/claude-opus-5.5',
    upstreamId: 'claude-opus-5-5',
    name: 'Anthropic: Claude Opus 5.5',
    description: 'Anthropic’s Opus model for long-running agentic coding and knowledge work. Adaptive thinking, always on.',
    contextLength: 1_000_000,
    maxCompletionTokens: 128_000,
    pricing: price('4', '20', '0.20', '5', '8'),
    inputModalities: MODALITIES,
    supportedParameters: CLAUDE,
    reasoning: { mandatory: true, efforts: EFFORTS },
    tags: ['programming', 'legal', 'finance'],
    created: epoch('2026-09-22'),
    releaseDate: '2026-09-22',
    knowledgeCutoff: '2026-06',
    detailsUrl: docs('opus-5-5'),
    source: source(EFFORTS_NOTE),
  },
  {
    id: 'anthropic/claude-opus-5',
    upstreamId: 'claude-opus-5',
    name: 'Anthropic: Claude Opus 5',
    description: 'The previous Opus model (legacy). Adaptive thinking.',
    contextLength: 1_000_000,
    maxCompletionTokens: 128_000,
    pricing: price('5', '25', '0.50', '6.25', '10'),
    inputModalities: MODALITIES,
    supportedParameters: CLAUDE,
    reasoning: { efforts: EFFORTS },
    tags: ['programming'],
    created: epoch('2026-07-24'),
    releaseDate: '2026-07-24',
    knowledgeCutoff: '2026-05',
    detailsUrl: docs('opus-5'),
    source: source(EFFORTS_NOTE),
  },
  {
    id: 'anthropic/claude-sonnet-5.5',
    upstreamId: 'claude-sonnet-5-5',
    name: 'Anthropic: Claude Sonnet 5.5',
    description: 'Anthropic’s best combination of speed and intelligence. Adaptive thinking.',
    contextLength: 1_000_000,
    maxCompletionTokens: 128_000,
    pricing: price('2', '10', '0.10', '2.50', '4'),
    inputModalities: MODALITIES,
    supportedParameters: CLAUDE,
    reasoning: { efforts: EFFORTS },
    tags: ['programming', 'marketing', 'translation'],
    created: epoch('2026-09-28'),
    releaseDate: '2026-09-28',
    knowledgeCutoff: '2026-06',
    detailsUrl: docs('sonnet-5-5'),
    source: source(`${EFFORTS_NOTE} Cache reads cut from $0.20 to $0.10 / MTok on 2026-10-07.`),
  },
  {
    id: 'anthropic/claude-haiku-4.5',
    upstreamId: 'claude-haiku-4-5',
    name: 'Anthropic: Claude Haiku 4.5',
    description: 'Anthropic’s fastest model of the 4.5 generation. Extended thinking with a token budget.',
    contextLength: 200_000,
    maxCompletionTokens: 64_000,
    pricing: price('1', '5', '0.10', '1.25', '2', false),
    inputModalities: MODALITIES,
    supportedParameters: CLAUDE,
    reasoning: { supportsMaxTokens: true },
    tags: ['trivia', 'translation'],
    created: epoch('2025-10-15'),
    releaseDate: '2025-10-15',
    knowledgeCutoff: '2025-02',
    detailsUrl: docs('haiku-4-5'),
    source: source(`${AUDITED}; extended thinking with a token budget, no effort levels.`),
  },
]
