import { readLiteLLMTable } from './litellm-table'
import { readOpenRouterTable } from './openrouter-table'
import type { PriceTable } from './price-table'

/** Reads parsed JSON as LiteLLM's or OpenRouter's table, recognised by its shape; throws a TypeError for anything else. */
export function readPriceTable(json: unknown, name: string): PriceTable {
  if (json && typeof json === 'object' && !Array.isArray(json)) {
    const data = (json as { data?: unknown }).data
    if (
      Array.isArray(data) &&
      data.some((row) => row && typeof row === 'object' && typeof row.id === 'string' && row.pricing && typeof row.pricing === 'object')
    ) {
      return readOpenRouterTable(data)
    }
    if (Object.values(json).some((row) => row && typeof row === 'object' && typeof (row as { litellm_provider?: unknown }).litellm_provider === 'string')) {
      return readLiteLLMTable(json as Record<string, unknown>)
    }
  }
  throw new TypeError(
    `${name}: not a price table this command knows: expected LiteLLM's model_prices_and_context_window.json (rows with litellm_provider) or OpenRouter's GET /api/v1/models ({ "data": [{ "id", "pricing", … }] })`,
  )
}
