import type { ModelPricing } from '../contracts'
import { numberToPlainString } from '../billing/money'

/*
 * A maintained price table (LiteLLM's model_prices_and_context_window.json or OpenRouter's GET /api/v1/models),
 * read into rows the gateway can match against its catalogue (docs/catalogue.md, "Refreshing prices").
 */

/** The per-token (or per-unit) prices a table gives, as exact decimal strings in USD. */
export type TablePricing = Pick<
  ModelPricing,
  'prompt' | 'completion' | 'input_cache_read' | 'input_cache_write' | 'request' | 'image' | 'web_search' | 'internal_reasoning'
>

/** One row of a price table, for one of the gateway's providers. */
export interface TableRow {
  /** The row's name in the table (a LiteLLM key, an OpenRouter id), for messages. */
  key: string
  /** The gateway provider slug it prices. */
  provider: string
  /** LiteLLM: the id the provider's API expects; matched against the catalogue's upstream ids. */
  upstreamId?: string
  /** OpenRouter: the gateway model id, matched against the catalogue's ids. */
  id?: string
  /** The gateway id and upstream id of the model when the catalogue lacks it; absent when the id is not clear (`unclear` says why). */
  newModel?: { id: string; upstreamId: string; name?: string; created?: number }
  unclear?: string
  pricing: TablePricing
  /** The context length (LiteLLM: the input limit, `contextOr` the input plus output limits). */
  contextLength?: number
  contextOr?: number
  maxCompletionTokens?: number
  /** The day the provider stops serving it, `YYYY-MM-DD`. */
  expirationDate?: string
}

/** A price table read: its format, its rows for known providers, and the rows left out, counted by reason. */
export interface PriceTable {
  format: 'litellm' | 'openrouter'
  rows: TableRow[]
  skipped: Skipped
}

/** Rows left out, by reason, with a few example names each. */
export type Skipped = Map<string, { count: number; examples: string[] }>

/** Counts a row left out for `reason`, keeping the first three names as examples. */
export function skip(skipped: Skipped, reason: string, name: string): void {
  const entry = skipped.get(reason) ?? { count: 0, examples: [] }
  entry.count++
  if (entry.examples.length < 3 && !entry.examples.includes(name)) entry.examples.push(name)
  skipped.set(reason, entry)
}

/**
 * A price as an exact decimal string, or undefined when it is not one: a number is written as its shortest decimal
 * representation (2.5e-06 → "0.0000025", never toFixed's binary noise), a string must already be a plain decimal.
 */
export function priceText(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? numberToPlainString(value) : undefined
  if (typeof value !== 'string') return undefined
  const text = value.trim()
  if (/^\d+(?:\.\d+)?$/.test(text))
    return text
      .replace(/^0+(?=\d)/, '')
      .replace(/(\.\d*?)0+$/, '$1')
      .replace(/\.$/, '')
  // Exponent notation in a string ("1e-06"): through the number's shortest representation.
  return /^\d+(?:\.\d+)?e[+-]?\d+$/i.test(text) ? priceText(Number(text)) : undefined
}

/** A whole positive count, or undefined. */
export const tokenCount = (value: unknown): number | undefined => (typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined)

/** A day `YYYY-MM-DD` (a longer ISO time is cut to its day), or undefined. */
export function dayText(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  const day = value.trim().slice(0, 10)
  const at = Date.parse(`${day}T00:00:00Z`)
  return /^\d{4}-\d{2}-\d{2}$/.test(day) && Number.isFinite(at) && new Date(at).toISOString().startsWith(day) ? day : undefined
}
