import type { ProviderModel } from '../contracts'
import { anthropicModels } from './anthropic-models'
import { geminiModels } from './gemini-models'
import { openaiAudioModels } from './audio-models'
import { embeddingModels } from './embedding-models'
import { HOST_FACTS } from '../providers/hosts'

/*
 * Well-known models per provider, with published list prices (USD per token) and context lengths.
 *
 * Checked on 2026-11-26 against public copies of the providers' pricing and deprecation pages, OpenRouter's model
 * pages and LiteLLM's price table; each entry's `source` names the page relied on and says in its `note` what is
 * derived or unsettled. Values marked "per the 2026-11-26 audit" were not re-read line by line. Override prices in
 * `createGateway({ modelOverrides })` when your contract differs.
 *
 * - Retirements: `expirationDate` is the day the provider stops serving the model (from that UTC day the offer is not
 *   routed); `replacement` is the model to use instead, always one listed in this catalogue.
 * - OpenAI's GPT-6 family (gpt-6.1-sol, gpt-6.1-terra, gpt-6-luna), like GPT-5.4 and later, bills a whole request at
 *   2× input / cache and 1.5× output once its prompt exceeds 272K input tokens: `pricing.long_context` says so.
 * - Left out: DeepSeek's current model (deepseek-flash, V4.1-Flash), which DeepSeek prices in yuan with off-peak and
 *   peak rates by time of day; the gateway bills one price per token in one currency and cannot bill it honestly.
 *   DeepSeek retired `deepseek-chat` and `deepseek-reasoner` on 2026-07-24, so the deepseek preset serves no model.
 */

const CHECKED = '2026-11-26'
const perMillion = (usd: number) => (usd / 1_000_000).toFixed(12).replace(/0+$/, '').replace(/\.$/, '')
const price = (input: number, output: number, cachedInput?: number): ProviderModel['pricing'] => ({
  prompt: perMillion(input),
  completion: perMillion(output),
  ...(cachedInput === undefined ? {} : { input_cache_read: perMillion(cachedInput) }),
  currency: 'USD',
})
const epoch = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000
const source = (url: string, note?: string): ProviderModel['source'] => ({ url, checked: CHECKED, ...(note ? { note } : {}) })

const CHAT = ['max_tokens', 'temperature', 'top_p', 'stop', 'seed', 'frequency_penalty', 'presence_penalty', 'response_format', 'tools', 'tool_choice']
const OPENAI_CHAT = [...CHAT, 'max_completion_tokens', 'logprobs', 'top_logprobs', 'logit_bias', 'parallel_tool_calls', 'structured_outputs', 'user']
const OPENAI_REASONING = [
  'max_tokens',
  'max_completion_tokens',
  'seed',
  'response_format',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'structured_outputs',
  'reasoning',
  'include_reasoning',
  'user',
]
const TOOLS = ['tools', 'tool_choice', 'parallel_tool_calls']
const OPEN_WEIGHTS = [...CHAT, 'top_k', 'repetition_penalty', 'min_p', 'logprobs', 'top_logprobs']
const EFFORTS = ['minimal', 'low', 'medium', 'high']
const GPT6_EFFORTS = ['none', 'low', 'medium', 'high', 'xhigh', 'max']
const docs = (model: string) => `https://platform.openai.com/docs/models/${model}`

// Sources read on 2026-11-26.
const OPENAI_DEPRECATIONS = 'https://developers.openai.com/api/docs/deprecations'
const LITELLM = 'https://github.com/BerriAI/litellm/blob/main/model_prices_and_context_window.json'
const LONG_CONTEXT =
  'Prompts over 272K input tokens: OpenAI bills the whole request at 2× input and cache, 1.5× output; so does the gateway (pricing.long_context).'
// OpenAI's long-context rates of the GPT-6 family: past 272K prompt tokens, 2× input and cache, 1.5× output, for the whole request.
const longContext = (input: number, output: number, cachedInput: number): ProviderModel['pricing'] => ({
  ...price(input, output, cachedInput),
  long_context: {
    above_prompt_tokens: 272_000,
    prompt: perMillion(input * 2),
    completion: perMillion(output * 1.5),
    input_cache_read: perMillion(cachedInput * 2),
  },
})
const DEC_11 = 'OpenAI shuts it down on 2026-12-11 (notice of 2026-06-11, OpenAI’s deprecations page).'
const JAN_14 =
  'OpenAI shuts it down on 2027-01-14 (deprecations page, notice of 2026-10-14); the replacement it names is gpt-6-luna (as quoted by dev.to/max_bob, codersera.com and importstatic.com; CometAPI recommends gpt-6.1-sol for gpt-4o and gpt-4.1 instead).'
const OCT_23 = 'OpenAI shut it down on 2026-10-23 (deprecations page as of 2026-10-15, quoted by importstatic.com).'
const AUDIT_PRICES = 'Prices unchanged per the 2026-11-26 audit (not re-read line by line).'

/** Models per provider slug. */
export const knownModels: Record<string, ProviderModel[]> = {
  openai: [
    {
      id: 'openai/gpt-6.1-sol',
      upstreamId: 'gpt-6.1-sol',
      name: 'OpenAI: GPT-6.1 Sol',
      description: 'OpenAI’s upgraded Sol reasoning model for coding, computer use and professional work (1.05M context, 922K input).',
      contextLength: 1_050_000,
      maxCompletionTokens: 128_000,
      pricing: longContext(2, 10, 0.1),
      inputModalities: ['text', 'image'],
      // Chat Completions takes function tools only with reasoning effort `none`, which gpt-6.1-sol does not accept.
      supportedParameters: OPENAI_REASONING.filter((p) => !TOOLS.includes(p)),
      reasoning: { efforts: ['low', 'medium', 'high', 'xhigh', 'max'] },
      tags: ['programming', 'science', 'academia'],
      created: epoch('2026-09-29'),
      releaseDate: '2026-09-29',
      detailsUrl: docs('gpt-6.1-sol'),
      source: source(
        'https://docs.litellm.ai/blog/gpt_6_1_sol',
        `$2 / $10, cached input $0.10 per M (LiteLLM’s day-0 post; apidog.com and laozhang.ai agree); 1,050,000 context, 922K input, 128K output (laozhang.ai, from OpenAI’s model page); efforts low…max, no none or minimal (apidog.com). Chat Completions accepts function tools only with effort none (instructorphp 2.14.2 release notes), so tools are not listed. ${LONG_CONTEXT}`,
      ),
    },
    {
      id: 'openai/gpt-6.1-terra',
      upstreamId: 'gpt-6.1-terra',
      name: 'OpenAI: GPT-6.1 Terra',
      description: 'OpenAI’s mid-tier GPT-6.1 model for computer use, visual understanding, coding and everyday work (1.05M context, 922K input).',
      contextLength: 1_050_000,
      maxCompletionTokens: 128_000,
      pricing: longContext(1, 5, 0.05),
      inputModalities: ['text', 'image'],
      supportedParameters: OPENAI_REASONING,
      reasoning: { efforts: GPT6_EFFORTS },
      tags: ['programming', 'technology'],
      created: epoch('2026-10-26'),
      releaseDate: '2026-10-26',
      knowledgeCutoff: '2026-06-01',
      detailsUrl: docs('gpt-6.1-terra'),
      source: source(
        'https://docs.litellm.ai/blog/gpt-6-1-terra',
        `$1 / $5, cache read $0.05 per M (LiteLLM’s day-0 post; apidog.com and OpenRouter via apidog agree); 1,050,000 context, 922K input, 128K output, efforts none…max, released 2026-10-26, cutoff 2026-06-01 (apidog.com, from OpenAI’s model page). Function tools on Chat Completions only with effort none. ${LONG_CONTEXT}`,
      ),
    },
    {
      id: 'openai/gpt-6-luna',
      upstreamId: 'gpt-6-luna',
      name: 'OpenAI: GPT-6 Luna',
      description: 'OpenAI’s most efficient GPT-6 reasoning model, for focused high-volume work (1.05M context, 922K input).',
      contextLength: 1_050_000,
      maxCompletionTokens: 128_000,
      pricing: longContext(0.1, 0.5, 0.01),
      inputModalities: ['text', 'image'],
      supportedParameters: OPENAI_REASONING,
      reasoning: { efforts: GPT6_EFFORTS },
      tags: ['translation', 'marketing', 'trivia'],
      created: epoch('2026-09-22'),
      releaseDate: '2026-09-22',
      knowledgeCutoff: '2026-05-18',
      detailsUrl: docs('gpt-6-luna'),
      source: source(
        'https://vercel.com/ai-gateway/models/openai/gpt-6-luna',
        `$0.10 / $0.50 per M, 1,050,000 context, 128K output (Vercel AI Gateway, linking OpenAI’s pricing); cached input $0.01 (codersera.com, instructorphp 2.14.2); efforts none…max, cutoff 2026-05-18 (docs.oxen.ai); released 2026-09-22 (runware.ai, docs.venice.ai). Function tools on Chat Completions only with effort none (docs.oxen.ai). ${LONG_CONTEXT}`,
      ),
    },
    {
      id: 'openai/gpt-5',
      name: 'OpenAI: GPT-5',
      contextLength: 400_000,
      maxCompletionTokens: 128_000,
      pricing: price(1.25, 10, 0.125),
      inputModalities: ['text', 'image', 'file'],
      supportedParameters: OPENAI_REASONING,
      reasoning: { efforts: EFFORTS },
      tags: ['programming', 'science', 'academia'],
      created: 1754524800,
      knowledgeCutoff: '2024-09-30',
      detailsUrl: docs('gpt-5'),
      expirationDate: '2026-12-11',
      replacement: 'openai/gpt-6.1-sol',
      source: source(
        OPENAI_DEPRECATIONS,
        `${DEC_11} The page names gpt-6.1-sol (copies of October 2026 named gpt-5.6-sol, not in this catalogue). Prices and 272K input + 128K output as in LiteLLM’s table.`,
      ),
    },
    {
      id: 'openai/gpt-5-mini',
      name: 'OpenAI: GPT-5 mini',
      contextLength: 400_000,
      maxCompletionTokens: 128_000,
      pricing: price(0.25, 2, 0.025),
      inputModalities: ['text', 'image', 'file'],
      supportedParameters: OPENAI_REASONING,
      reasoning: { efforts: EFFORTS },
      tags: ['programming'],
      created: 1754524800,
      knowledgeCutoff: '2024-05-31',
      detailsUrl: docs('gpt-5-mini'),
      expirationDate: '2026-12-11',
      replacement: 'openai/gpt-6.1-terra',
      source: source(OPENAI_DEPRECATIONS, `${DEC_11} The page names gpt-6.1-terra (October copies: gpt-5.6-terra). ${AUDIT_PRICES}`),
    },
    {
      id: 'openai/gpt-5-nano',
      name: 'OpenAI: GPT-5 nano',
      contextLength: 400_000,
      maxCompletionTokens: 128_000,
      pricing: price(0.05, 0.4, 0.005),
      inputModalities: ['text', 'image', 'file'],
      supportedParameters: OPENAI_REASONING,
      reasoning: { efforts: EFFORTS },
      tags: ['technology'],
      created: 1754524800,
      knowledgeCutoff: '2024-05-31',
      detailsUrl: docs('gpt-5-nano'),
      expirationDate: '2026-12-11',
      replacement: 'openai/gpt-6-luna',
      source: source(
        OPENAI_DEPRECATIONS,
        `${DEC_11} Replacement derived: the copy read cuts this row at “gpt-6…”; gpt-6-luna is the GPT-6 model of nano’s tier (October copies: gpt-5.6-luna). ${AUDIT_PRICES}`,
      ),
    },
    {
      id: 'openai/gpt-4.1',
      name: 'OpenAI: GPT-4.1',
      contextLength: 1_047_576,
      maxCompletionTokens: 32_768,
      pricing: price(2, 8, 0.5),
      inputModalities: ['text', 'image', 'file'],
      supportedParameters: OPENAI_CHAT,
      tags: ['programming', 'legal', 'finance'],
      created: 1744675200,
      knowledgeCutoff: '2024-06-01',
      detailsUrl: docs('gpt-4.1'),
      expirationDate: '2027-01-14',
      replacement: 'openai/gpt-6-luna',
      source: source(OPENAI_DEPRECATIONS, `${JAN_14} ${AUDIT_PRICES}`),
    },
    {
      id: 'openai/gpt-4.1-mini',
      name: 'OpenAI: GPT-4.1 mini',
      contextLength: 1_047_576,
      maxCompletionTokens: 32_768,
      pricing: price(0.4, 1.6, 0.1),
      inputModalities: ['text', 'image', 'file'],
      supportedParameters: OPENAI_CHAT,
      tags: ['programming', 'translation'],
      created: 1744675200,
      knowledgeCutoff: '2024-06-01',
      detailsUrl: docs('gpt-4.1-mini'),
      expirationDate: '2027-01-14',
      replacement: 'openai/gpt-6-luna',
      source: source(OPENAI_DEPRECATIONS, `${JAN_14} ${AUDIT_PRICES}`),
    },
    {
      id: 'openai/gpt-4.1-nano',
      name: 'OpenAI: GPT-4.1 nano',
      contextLength: 1_047_576,
      maxCompletionTokens: 32_768,
      pricing: price(0.1, 0.4, 0.025),
      inputModalities: ['text', 'image', 'file'],
      supportedParameters: OPENAI_CHAT,
      tags: ['marketing', 'seo'],
      created: 1744675200,
      knowledgeCutoff: '2024-06-01',
      detailsUrl: docs('gpt-4.1-nano'),
      expirationDate: '2026-10-23',
      replacement: 'openai/gpt-6-luna',
      source: source(
        OPENAI_DEPRECATIONS,
        `${OCT_23} Replacement derived: the copy read cuts this row before its replacement; gpt-6-luna is the current model of its tier (instructorphp moved its gpt-4.1-nano default to it; Retell chose gpt-5.6-luna, not in this catalogue).`,
      ),
    },
    {
      id: 'openai/gpt-4o',
      name: 'OpenAI: GPT-4o',
      contextLength: 128_000,
      maxCompletionTokens: 16_384,
      pricing: price(2.5, 10, 1.25),
      inputModalities: ['text', 'image', 'file'],
      supportedParameters: OPENAI_CHAT,
      tags: ['roleplay', 'marketing', 'health'],
      created: 1715558400,
      knowledgeCutoff: '2023-10-01',
      detailsUrl: docs('gpt-4o'),
      expirationDate: '2027-01-14',
      replacement: 'openai/gpt-6-luna',
      source: source(OPENAI_DEPRECATIONS, `${JAN_14} ${AUDIT_PRICES}`),
    },
    {
      id: 'openai/gpt-4o-mini',
      name: 'OpenAI: GPT-4o mini',
      contextLength: 128_000,
      maxCompletionTokens: 16_384,
      pricing: price(0.15, 0.6, 0.075),
      inputModalities: ['text', 'image', 'file'],
      supportedParameters: OPENAI_CHAT,
      tags: ['trivia', 'translation', 'marketing'],
      created: 1721260800,
      knowledgeCutoff: '2023-10-01',
      detailsUrl: docs('gpt-4o-mini'),
      expirationDate: '2027-01-14',
      replacement: 'openai/gpt-6-luna',
      source: source(OPENAI_DEPRECATIONS, `${JAN_14} Prices and limits as in LiteLLM’s table (${LITELLM}).`),
    },
    {
      id: 'openai/o4-mini',
      name: 'OpenAI: o4-mini',
      contextLength: 200_000,
      maxCompletionTokens: 100_000,
      pricing: price(1.1, 4.4, 0.275),
      inputModalities: ['text', 'image', 'file'],
      supportedParameters: OPENAI_REASONING,
      reasoning: { efforts: ['low', 'medium', 'high'] },
      tags: ['science', 'academia', 'programming'],
      created: 1744848000,
      knowledgeCutoff: '2024-06-01',
      detailsUrl: docs('o4-mini'),
      expirationDate: '2026-10-23',
      replacement: 'openai/gpt-6.1-terra',
      source: source(
        OPENAI_DEPRECATIONS,
        `${OCT_23} Replacement derived: the page named gpt-5.6-terra, which is not in this catalogue; gpt-6.1-terra replaced it (apidog.com).`,
      ),
    },
    {
      id: 'openai/o3',
      name: 'OpenAI: o3',
      contextLength: 200_000,
      maxCompletionTokens: 100_000,
      pricing: price(2, 8, 0.5),
      inputModalities: ['text', 'image', 'file'],
      supportedParameters: OPENAI_REASONING,
      reasoning: { efforts: ['low', 'medium', 'high'] },
      tags: ['science', 'academia', 'finance'],
      created: 1744848000,
      knowledgeCutoff: '2024-06-01',
      detailsUrl: docs('o3'),
      expirationDate: '2026-12-11',
      replacement: 'openai/gpt-6.1-sol',
      source: source(
        OPENAI_DEPRECATIONS,
        `${DEC_11} Replacement derived: the copy read ends before the o3 row; every copy names the same model for gpt-5 and o3 (gpt-5.6-sol in October), and gpt-5’s row now names gpt-6.1-sol. ${AUDIT_PRICES}`,
      ),
    },
    ...openaiAudioModels,
    ...embeddingModels.openai,
  ],
  groq: [
    {
      id: 'meta-llama/llama-3.3-70b-instruct',
      upstreamId: 'llama-3.3-70b-versatile',
      name: 'Meta: Llama 3.3 70B Instruct',
      contextLength: 131_072,
      maxCompletionTokens: 32_768,
      pricing: price(0.59, 0.79),
      supportedParameters: CHAT,
      tags: ['programming', 'roleplay'],
      huggingFaceId: 'meta-llama/Llama-3.3-70B-Instruct',
      created: 1733443200,
      expirationDate: '2026-08-16',
      source: source(
        'https://github.com/papi-ai/groq/releases/tag/v0.15.2',
        'Groq decommissioned llama-3.3-70b-versatile on 2026-08-16 (its client’s release notes and codedaily04/commit-craft#1 quoting Groq; Groq recommends gpt-oss-120b or qwen3.6-27b, not in this catalogue). The model stays served by Together and Fireworks. Prices per the 2026-11-26 audit.',
      ),
    },
    {
      id: 'meta-llama/llama-3.1-8b-instruct',
      upstreamId: 'llama-3.1-8b-instant',
      name: 'Meta: Llama 3.1 8B Instruct',
      contextLength: 131_072,
      maxCompletionTokens: 131_072,
      pricing: price(0.05, 0.08),
      supportedParameters: CHAT,
      tags: ['trivia'],
      huggingFaceId: 'meta-llama/Llama-3.1-8B-Instruct',
      created: 1721692800,
      expirationDate: '2026-08-16',
      source: source(
        'https://github.com/papi-ai/groq/releases/tag/v0.15.2',
        'Groq decommissioned llama-3.1-8b-instant on 2026-08-16; no other provider in this catalogue serves the 8B, so it is retired here, with no replacement in this catalogue. Prices per the 2026-11-26 audit.',
      ),
    },
  ],
  together: [
    {
      id: 'meta-llama/llama-3.3-70b-instruct',
      upstreamId: 'meta-llama/Llama-3.3-70B-Instruct-Turbo',
      name: 'Meta: Llama 3.3 70B Instruct',
      contextLength: 131_072,
      maxCompletionTokens: 8_192,
      pricing: price(0.88, 0.88),
      supportedParameters: OPEN_WEIGHTS,
      tags: ['programming', 'roleplay'],
      huggingFaceId: 'meta-llama/Llama-3.3-70B-Instruct',
      created: 1733443200,
      source: source(
        'https://www.together.ai/pricing',
        'Unsettled: whether Together still serves Llama 3.3 70B Turbo serverless could not be confirmed on 2026-11-26 (no current copy of its model list was found); $0.88 / $0.88 per the 2026-11-26 audit.',
      ),
    },
    ...embeddingModels.together,
  ],
  fireworks: [
    {
      id: 'meta-llama/llama-3.3-70b-instruct',
      upstreamId: 'accounts/fireworks/models/llama-v3p3-70b-instruct',
      name: 'Meta: Llama 3.3 70B Instruct',
      contextLength: 131_072,
      maxCompletionTokens: 16_384,
      pricing: price(0.9, 0.9),
      supportedParameters: OPEN_WEIGHTS,
      tags: ['programming', 'roleplay'],
      huggingFaceId: 'meta-llama/Llama-3.3-70B-Instruct',
      created: 1733443200,
      source: source(
        'https://www.lava.so/docs/gateway/providers/fireworks',
        'Unsettled: Lava’s (undated) list of Fireworks models still shows llama-v3p3-70b-instruct at $0.90 / $0.90, but Fireworks’ own serverless list was not found, so whether it is still served is not confirmed.',
      ),
    },
  ],
  mistral: [
    {
      id: 'mistralai/mistral-large-2512',
      upstreamId: 'mistral-large-2512',
      name: 'Mistral: Mistral Large 3 2512',
      description: 'Mistral’s open-weight (Apache 2.0) mixture-of-experts flagship, 41B active / 675B total parameters.',
      contextLength: 262_144,
      pricing: price(0.5, 1.5),
      inputModalities: ['text', 'image'],
      supportedParameters: CHAT,
      tags: ['legal', 'translation'],
      huggingFaceId: 'mistralai/Mistral-Large-3-675B-Instruct-2512',
      created: epoch('2025-12-02'),
      releaseDate: '2025-12-02',
      source: source(
        'https://openrouter.ai/mistralai/mistral-large-2512',
        '$0.50 / $1.50 per M, 262K context (OpenRouter’s page, read in a copy); hokai.io and frankx.ai give the same prices, 256K context, released 2025-12-02.',
      ),
    },
    {
      id: 'mistralai/mistral-large',
      upstreamId: 'mistral-large-latest',
      name: 'Mistral: Mistral Large (latest)',
      description: 'Mistral’s alias for its current Large model, now Mistral Large 3 (mistral-large-2512).',
      contextLength: 262_144,
      pricing: price(0.5, 1.5),
      inputModalities: ['text', 'image'],
      supportedParameters: CHAT,
      tags: ['legal', 'translation'],
      created: epoch('2025-12-02'),
      releaseDate: '2025-12-02',
      source: source(
        'https://openrouter.ai/mistralai/mistral-large-2512',
        'mistral-large-latest points to Mistral Large 3 (per the 2026-11-26 audit), so it is priced as mistral-large-2512: $0.50 / $1.50 per M, 262K context.',
      ),
    },
    {
      id: 'mistralai/mistral-small-2603',
      upstreamId: 'mistral-small-2603',
      name: 'Mistral: Mistral Small 4',
      description: 'Mistral Small 4, unifying reasoning, vision and coding in one open-weight model.',
      contextLength: 262_144,
      pricing: price(0.15, 0.6),
      inputModalities: ['text', 'image'],
      supportedParameters: CHAT,
      tags: ['translation', 'marketing'],
      created: epoch('2026-03-16'),
      releaseDate: '2026-03-16',
      knowledgeCutoff: '2025-06',
      source: source(
        'https://switchy.build/models/mistral-small-2603',
        '$0.15 / $0.60 per M and 262,144 context as OpenRouter lists it (switchy.build, picksbymodel.com); models.dev (via whichllm.io) gives the same prices, 256K context, released 2026-03-16, cutoff 2025-06.',
      ),
    },
    {
      id: 'mistralai/mistral-small',
      upstreamId: 'mistral-small-latest',
      name: 'Mistral: Mistral Small (latest)',
      description: 'Mistral’s alias for its current Small model, now Mistral Small 4 (mistral-small-2603).',
      contextLength: 262_144,
      pricing: price(0.15, 0.6),
      inputModalities: ['text', 'image'],
      supportedParameters: CHAT,
      tags: ['translation', 'marketing'],
      created: epoch('2026-03-16'),
      releaseDate: '2026-03-16',
      source: source(
        'https://switchy.build/models/mistral-small-2603',
        'mistral-small-latest points to Mistral Small 4 (per the 2026-11-26 audit), so it is priced as mistral-small-2603: $0.15 / $0.60 per M, 262,144 context.',
      ),
    },
    ...embeddingModels.mistral,
  ],
  deepseek: [
    {
      id: 'deepseek/deepseek-chat',
      upstreamId: 'deepseek-chat',
      name: 'DeepSeek: DeepSeek V3',
      contextLength: 65_536,
      maxCompletionTokens: 8_192,
      pricing: price(0.27, 1.1, 0.07),
      supportedParameters: CHAT,
      tags: ['programming', 'finance'],
      huggingFaceId: 'deepseek-ai/DeepSeek-V3',
      created: 1735257600,
      expirationDate: '2026-07-24',
      source: source(
        'https://api-docs.deepseek.com/quick_start/pricing',
        'DeepSeek retired the name deepseek-chat on 2026-07-24 (calls fail), per the 2026-11-26 audit; DeepSeek’s page was not re-read. No replacement: its current model (deepseek-flash) is priced in yuan by time of day and left out; no other provider here serves DeepSeek.',
      ),
    },
    {
      id: 'deepseek/deepseek-r1',
      upstreamId: 'deepseek-reasoner',
      name: 'DeepSeek: R1',
      contextLength: 65_536,
      maxCompletionTokens: 32_768,
      pricing: price(0.55, 2.19, 0.14),
      supportedParameters: ['max_tokens', 'reasoning', 'include_reasoning'],
      reasoning: { mandatory: true },
      tags: ['science', 'academia'],
      huggingFaceId: 'deepseek-ai/DeepSeek-R1',
      created: 1737331200,
      expirationDate: '2026-07-24',
      source: source(
        'https://api-docs.deepseek.com/quick_start/pricing',
        'DeepSeek retired the name deepseek-reasoner on 2026-07-24, per the 2026-11-26 audit. No replacement here (OpenRouter still serves the original R1 at $0.70 / $2.50 through other hosts, none of them in this catalogue).',
      ),
    },
  ],
  anthropic: anthropicModels,
  'google-ai-studio': geminiModels,
  xai: [
    {
      id: 'x-ai/grok-3-mini',
      upstreamId: 'grok-3-mini',
      name: 'xAI: Grok 3 Mini',
      contextLength: 131_072,
      pricing: price(0.3, 0.5, 0.075),
      supportedParameters: [...CHAT, 'reasoning', 'logprobs', 'top_logprobs'],
      reasoning: { efforts: ['low', 'high'] },
      tags: ['science', 'trivia'],
      created: 1744156800,
      expirationDate: '2026-02-28',
      source: source(
        'https://docs.x.ai/docs/models',
        'Deprecated on 2026-02-28 per the 2026-11-26 audit (xAI’s page was not found in a copy). No replacement added: xAI points its retired models to grok-4.3 ($1.25 / $2.50, higher above 204,800 prompt tokens, per apidog.com), which is not a small model and whose length-tiered price a flat price cannot bill.',
      ),
    },
  ],
}

/** Providers' facts and API roots by slug (OpenAI, Anthropic, Google AI Studio and the hosts of src/providers/hosts/, where they are written). */
export const knownHosts: Record<
  string,
  { name: string; baseURL: string; headquarters?: string; privacyPolicyUrl?: string; termsOfServiceUrl?: string; statusPageUrl?: string }
> = HOST_FACTS

/** Model authors' display facts for `author_info`. */
export const knownAuthors: Record<string, { name: string; websiteUrl: string }> = {
  openai: { name: 'OpenAI', websiteUrl: 'https://openai.com' },
  'meta-llama': { name: 'Meta', websiteUrl: 'https://llama.com' },
  mistralai: { name: 'Mistral', websiteUrl: 'https://mistral.ai' },
  deepseek: { name: 'DeepSeek', websiteUrl: 'https://deepseek.com' },
  'x-ai': { name: 'xAI', websiteUrl: 'https://x.ai' },
  anthropic: { name: 'Anthropic', websiteUrl: 'https://anthropic.com' },
  google: { name: 'Google', websiteUrl: 'https://ai.google.dev' },
  demo: { name: 'model-gateway demo', websiteUrl: '' },
}
