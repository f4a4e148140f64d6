import { dayText, priceText, skip, tokenCount, type PriceTable, type Skipped, type TableRow, type TablePricing } from './price-table'

/*
 * OpenRouter's GET /api/v1/models: `{ data: [{ id, name, created, context_length, pricing: { prompt, completion,
 * request, image, web_search, internal_reasoning, input_cache_read, input_cache_write }, top_provider:
 * { context_length, max_completion_tokens }, architecture: { output_modalities }, expiration_date }] }`, prices as
 * decimal strings per token. Its price of a model is the author's (or its top host's), so a row prices only the offer
 * of the author's own provider (docs/catalogue.md, "Refreshing prices").
 */

/** Model authors on OpenRouter → the slug of their own provider here. */
export const OPENROUTER_AUTHORS: Readonly<Record<string, string>> = {
  openai: 'openai',
  anthropic: 'anthropic',
  google: 'google-ai-studio',
  mistralai: 'mistral',
  'x-ai': 'xai',
  deepseek: 'deepseek',
}

const OPTIONAL_PRICES = ['request', 'image', 'web_search', 'internal_reasoning', 'input_cache_read', 'input_cache_write'] as const

/** The provider's API id of an OpenRouter id: the part after the author (Anthropic's version dots as dashes: claude-opus-5.5 → claude-opus-5-5). */
const upstreamIdOf = (provider: string, slug: string) => (provider === 'anthropic' ? slug.replace(/(\d)\.(\d)/g, '$1-$2') : slug)

interface OpenRouterModel {
  id?: unknown
  name?: unknown
  created?: unknown
  context_length?: unknown
  pricing?: Record<string, unknown>
  top_provider?: { context_length?: unknown; max_completion_tokens?: unknown } | null
  architecture?: { output_modalities?: unknown } | null
  expiration_date?: unknown
}

/** Reads OpenRouter's model list: the models of authors with a provider of their own here, with fixed per-token prices. */
export function readOpenRouterTable(data: unknown[]): PriceTable {
  const rows: TableRow[] = []
  const skipped: Skipped = new Map()
  for (const [index, value] of data.entries()) {
    const row = (value && typeof value === 'object' ? value : {}) as OpenRouterModel
    const id = typeof row.id === 'string' ? row.id : ''
    const author = id.split('/')[0]
    const provider = OPENROUTER_AUTHORS[author]
    if (!/^[^/\s]+\/[^/\s]+$/.test(id)) {
      skip(skipped, 'without a model id author/slug', id || `data[${index}]`)
      continue
    }
    if (!provider) {
      skip(skipped, 'of authors without a provider of their own here (OpenRouter’s price is not another host’s)', author)
      continue
    }
    if (id.includes(':')) {
      skip(skipped, 'OpenRouter variants (:free, :thinking, …)', id)
      continue
    }
    const output = row.architecture?.output_modalities
    if (Array.isArray(output) && !output.includes('text')) {
      skip(skipped, 'not chat models (image or audio output)', id)
      continue
    }
    const prompt = priceText(row.pricing?.prompt)
    const completion = priceText(row.pricing?.completion)
    if (prompt === undefined || completion === undefined) {
      skip(skipped, 'without a fixed per-token price', id)
      continue
    }
    const pricing: TablePricing = { prompt, completion }
    for (const field of OPTIONAL_PRICES) {
      const price = priceText(row.pricing?.[field])
      if (price && /[1-9]/.test(price)) pricing[field] = price
    }
    const slug = id.slice(author.length + 1)
    const upstreamId = upstreamIdOf(provider, slug)
    const name = typeof row.name === 'string' && row.name.length <= 200 ? row.name : undefined
    const created = tokenCount(row.created)
    const context = tokenCount(row.context_length) ?? tokenCount(row.top_provider?.context_length)
    const maxOutput = tokenCount(row.top_provider?.max_completion_tokens)
    const expires = dayText(row.expiration_date)
    const clear = /^[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.:@+-]*$/.test(id)
    rows.push({
      key: id,
      provider,
      id,
      ...(clear ? { newModel: { id, upstreamId, ...(name ? { name } : {}), ...(created ? { created } : {}) } } : { unclear: 'not a plain model id' }),
      pricing,
      ...(context ? { contextLength: context } : {}),
      ...(maxOutput ? { maxCompletionTokens: maxOutput } : {}),
      ...(expires ? { expirationDate: expires } : {}),
    })
  }
  return { format: 'openrouter', rows, skipped }
}
