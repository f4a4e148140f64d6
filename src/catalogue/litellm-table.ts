import { dayText, priceText, skip, tokenCount, type PriceTable, type Skipped, type TableRow, type TablePricing } from './price-table'

/*
 * LiteLLM's model_prices_and_context_window.json (github.com/BerriAI/litellm): an object keyed by model name, each row
 * with `litellm_provider`, `mode`, `input_cost_per_token`, `output_cost_per_token`, `cache_read_input_token_cost`,
 * `cache_creation_input_token_cost`, `max_input_tokens`, `max_output_tokens`, `deprecation_date`; `sample_spec`
 * documents the fields. Keys are the provider's API id, prefixed with the provider (`groq/…`, `gemini/…`) except
 * OpenAI's and Anthropic's. docs/catalogue.md, "Refreshing prices".
 */

/** LiteLLM's provider names → the gateway's provider slugs. */
export const LITELLM_PROVIDERS: Readonly<Record<string, string>> = {
  openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'google-ai-studio',
  mistral: 'mistral',
  groq: 'groq',
  together_ai: 'together',
  fireworks_ai: 'fireworks',
  deepseek: 'deepseek',
  xai: 'xai',
}

// First-party providers whose API ids name a model clearly: the gateway id is `<author>/<API id>`, Anthropic's version
// dashes written as dots as the catalogue writes them (claude-opus-5-5 → anthropic/claude-opus-5.5).
const AUTHORS: Readonly<Record<string, { author: string; slug?: (upstreamId: string) => string }>> = {
  openai: { author: 'openai' },
  anthropic: { author: 'anthropic', slug: (id) => id.replace(/(\d)-(\d)(?!\d)/g, '$1.$2') },
  'google-ai-studio': { author: 'google' },
  deepseek: { author: 'deepseek' },
  xai: { author: 'x-ai' },
}

const UNCLEAR: Readonly<Record<string, string>> = {
  mistral: 'Mistral API names are aliases and snapshots, not model ids',
  groq: 'a host of other authors’ models, whose model id cannot be told from the host’s id',
  together: 'a host of other authors’ models, whose model id cannot be told from the host’s id',
  fireworks: 'a host of other authors’ models, whose model id cannot be told from the host’s id',
}

/** A dated snapshot or an alias of a model (gpt-4o-2024-08-06, claude-haiku-4-5-20251001, gemini-2.0-flash-001, …-latest). */
export const SNAPSHOT = /-(?:latest|\d{4}-\d{2}-\d{2}|\d{2}-\d{2}|\d{3,8})$/

/** What a row of a first-party provider would be as a new model, or why it cannot be one. */
function newModelOf(provider: string, upstreamId: string): Pick<TableRow, 'newModel' | 'unclear'> {
  const author = AUTHORS[provider]
  if (!author) return { unclear: UNCLEAR[provider] ?? 'no clear model id' }
  if (!/^[a-z0-9][a-z0-9.-]*$/.test(upstreamId)) return { unclear: 'not a plain model name' }
  if (SNAPSHOT.test(upstreamId)) return { unclear: 'a dated snapshot or an alias of a model' }
  return { newModel: { id: `${author.author}/${author.slug ? author.slug(upstreamId) : upstreamId}`, upstreamId } }
}

const positive = (text: string | undefined) => (text && /[1-9]/.test(text) ? text : undefined)

interface LiteLLMRow {
  litellm_provider?: unknown
  mode?: unknown
  input_cost_per_token?: unknown
  output_cost_per_token?: unknown
  cache_read_input_token_cost?: unknown
  cache_creation_input_token_cost?: unknown
  max_input_tokens?: unknown
  max_output_tokens?: unknown
  deprecation_date?: unknown
}

/** Reads LiteLLM's table: rows of the providers the gateway has presets for, chat models with per-token prices. */
export function readLiteLLMTable(json: Record<string, unknown>): PriceTable {
  const rows: TableRow[] = []
  const skipped: Skipped = new Map()
  for (const [key, value] of Object.entries(json)) {
    if (key === 'sample_spec') continue
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      skip(skipped, 'not a row', key)
      continue
    }
    const row = value as LiteLLMRow
    const litellm = typeof row.litellm_provider === 'string' ? row.litellm_provider : ''
    const provider = LITELLM_PROVIDERS[litellm]
    if (!provider) {
      skip(skipped, 'of providers the gateway has no preset for', litellm || '(none)')
      continue
    }
    if (row.mode !== 'chat') {
      skip(skipped, 'not chat models (embeddings, images, audio, …)', key)
      continue
    }
    const prompt = priceText(row.input_cost_per_token)
    const completion = priceText(row.output_cost_per_token)
    if (prompt === undefined || completion === undefined) {
      skip(skipped, 'without a per-token input and output price', key)
      continue
    }
    const pricing: TablePricing = { prompt, completion }
    const cacheRead = positive(priceText(row.cache_read_input_token_cost))
    const cacheWrite = positive(priceText(row.cache_creation_input_token_cost))
    if (cacheRead) pricing.input_cache_read = cacheRead
    if (cacheWrite) pricing.input_cache_write = cacheWrite
    const upstreamId = key.startsWith(`${litellm}/`) ? key.slice(litellm.length + 1) : key
    const input = tokenCount(row.max_input_tokens)
    const output = tokenCount(row.max_output_tokens)
    rows.push({
      key,
      provider,
      upstreamId,
      ...newModelOf(provider, upstreamId),
      pricing,
      ...(input ? { contextLength: input } : {}),
      ...(input && output ? { contextOr: input + output } : {}),
      ...(output ? { maxCompletionTokens: output } : {}),
      ...(dayText(row.deprecation_date) ? { expirationDate: dayText(row.deprecation_date) } : {}),
    })
  }
  return { format: 'litellm', rows, skipped }
}
