import type { ModelPricing, UpstreamUsage } from '../providers/types'
import { decimal, decimalString, multiply, sum, toLedgerUnits, ZERO, type Decimal } from './decimal'

/** The exact cost of one request: in the pricing currency and in EUR, each rounded once to 12 digits. */
export interface RequestCost {
  currency: string
  /** Cost in `currency`, ledger units (10^-12). */
  units: bigint
  /** Cost in EUR, ledger units: what credits are charged. */
  eurUnits: bigint
  /** Prompt-side part in `currency`, ledger units. */
  promptUnits: bigint
  /** Completion-side part in `currency`, ledger units. */
  completionUnits: bigint
}

/** Countable extras of a request priced per unit. */
export interface BillableExtras {
  /** Input images (priced per image when the model has an `image` price). */
  images?: number
  /** Web searches run for the request. */
  webSearches?: number
}

const price = (text: string | undefined, fallback: Decimal = ZERO): Decimal => (text === undefined ? fallback : decimal(text))
// A count reported by an upstream: anything but a finite positive number (NaN, 1e400 = Infinity) counts 0.
const count = (n: number | undefined | null): bigint => BigInt(typeof n === 'number' && Number.isFinite(n) ? Math.max(0, Math.trunc(n)) : 0)

/** Request options that change what a request costs (docs/limits.md). */
export interface PricedOptions {
  /** The `service_tier` asked for; `auto`, `default` and none are the plain price. */
  serviceTier?: string | null
  /** The request asks for web search (`web_search_options`). */
  webSearch?: boolean
}

/** The service tiers billed at the model's plain price. */
export const PLAIN_TIERS: ReadonlySet<string> = new Set(['auto', 'default'])

/**
 * The pricing a request with these options pays: its service tier's prices over the model's, and web search's price
 * added to the per-request price (billed once per request). Throws a TypeError when the model does not price an
 * option; src/chat/priced-fields.ts refuses such requests before that.
 */
export function pricingWithOptions(pricing: ModelPricing, options: PricedOptions): ModelPricing {
  let priced = pricing
  const tier = options.serviceTier
  if (tier != null && !PLAIN_TIERS.has(tier)) {
    const prices = pricing.service_tiers?.[tier]
    if (!prices) throw new TypeError(`service tier ${tier} is not priced`)
    priced = { ...priced }
    for (const field of ['prompt', 'completion', 'input_cache_read'] as const) if (prices[field] !== undefined) priced[field] = prices[field]
  }
  if (options.webSearch) {
    if (pricing.web_search === undefined) throw new TypeError('web search is not priced')
    priced = { ...priced, request: decimalString(sum([price(pricing.request), decimal(pricing.web_search)])) }
  }
  return priced
}

/** The prices a request with this many prompt tokens pays: the long-context prices past their threshold, else the plain ones. */
export function pricingForPrompt(pricing: ModelPricing, promptTokens: number | bigint): ModelPricing {
  const long = pricing.long_context
  if (!long || BigInt(promptTokens) <= BigInt(long.above_prompt_tokens)) return pricing
  const { above_prompt_tokens: _threshold, ...prices } = long
  return { ...pricing, ...prices }
}

/** Prices reported usage with a model's pricing (its long-context prices for a long prompt), exactly (docs/money.md). */
export function priceUsage(plain: ModelPricing, usage: UpstreamUsage, extras: BillableExtras, eurPerUnit: string): RequestCost {
  const pricing = pricingForPrompt(plain, count(usage.prompt_tokens))
  const prompt = price(pricing.prompt)
  const completion = price(pricing.completion)
  const cached = count(usage.prompt_tokens_details?.cached_tokens)
  const written = count(usage.prompt_tokens_details?.cache_write_tokens)
  const promptTokens = count(usage.prompt_tokens)
  const uncached = promptTokens - cached - written > 0n ? promptTokens - cached - written : 0n
  const completionTokens = count(usage.completion_tokens)
  const reasoningTokens = pricing.internal_reasoning === undefined ? 0n : count(usage.completion_tokens_details?.reasoning_tokens)
  const visibleTokens = completionTokens > reasoningTokens ? completionTokens - reasoningTokens : 0n

  const promptSide = sum([
    multiply(decimal(uncached), prompt),
    multiply(decimal(cached), price(pricing.input_cache_read, prompt)),
    multiply(decimal(written), price(pricing.input_cache_write, prompt)),
    multiply(decimal(count(extras.images)), price(pricing.image)),
    price(pricing.request),
    multiply(decimal(count(extras.webSearches)), price(pricing.web_search)),
  ])
  const completionSide = sum([multiply(decimal(visibleTokens), completion), multiply(decimal(reasoningTokens), price(pricing.internal_reasoning, completion))])
  const total = sum([promptSide, completionSide])
  return {
    currency: pricing.currency ?? 'USD',
    units: toLedgerUnits(total),
    eurUnits: toLedgerUnits(multiply(total, decimal(eurPerUnit))),
    promptUnits: toLedgerUnits(promptSide),
    completionUnits: toLedgerUnits(completionSide),
  }
}
