import type { ModelPricing, ServiceTierPricing, UpstreamUsage } from '../contracts'
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

const bigMin = (a: bigint, b: bigint): bigint => (a < b ? a : b)
const price = (text: string | undefined, fallback: Decimal = ZERO): Decimal => (text === undefined ? fallback : decimal(text))
// A count reported by an upstream: anything but a finite positive number (NaN, 1e400 = Infinity) counts 0.
const count = (n: number | undefined | null): bigint => BigInt(typeof n === 'number' && Number.isFinite(n) ? Math.max(0, Math.trunc(n)) : 0)

/** Request options that change what a request costs (docs/money.md#priced-options). */
export interface PricedOptions {
  /** The `service_tier` asked for; `auto`, `default` and none are the plain price. */
  serviceTier?: string | null
  /** The request asks for web search (`web_search_options`). */
  webSearch?: boolean
  /** Anthropic's `speed` (`fast`); `standard` and none are the plain price. */
  speed?: string | null
  /** Anthropic's `inference_geo` (`us`); `global` and none are the plain price. */
  inferenceGeo?: string | null
}

/** The service tiers billed at the model's plain price. */
export const PLAIN_TIERS: ReadonlySet<string> = new Set(['auto', 'default'])
/** Anthropic's `speed` values billed at the plain price. */
export const PLAIN_SPEEDS: ReadonlySet<string> = new Set(['standard'])
/** Anthropic's `inference_geo` values billed at the plain price. */
export const PLAIN_GEOS: ReadonlySet<string> = new Set(['global'])

// The per-token prices a tier, a speed or a region changes.
const TOKEN_PRICES = ['prompt', 'completion', 'internal_reasoning', 'input_cache_read', 'input_cache_write', 'input_cache_write_1h'] as const

// The prices of a service tier over `pricing`'s.
function replaced(pricing: ModelPricing, options: ServiceTierPricing): ModelPricing {
  const priced: Record<string, unknown> = { ...pricing }
  for (const field of TOKEN_PRICES) {
    const value = (options as Record<string, string | undefined>)[field]
    if (value !== undefined) priced[field] = value
  }
  return priced as unknown as ModelPricing
}

// Every per-token price (the long-context ones too) times `factor`.
function scaled(pricing: ModelPricing, factor: string): ModelPricing {
  const times = (text: string) => decimalString(multiply(decimal(text), decimal(factor)))
  const priced = { ...pricing }
  for (const field of TOKEN_PRICES) if (priced[field] !== undefined) priced[field] = times(priced[field]!)
  if (pricing.long_context) {
    const long = { ...pricing.long_context }
    for (const field of TOKEN_PRICES) if (long[field] !== undefined) long[field] = times(long[field]!)
    priced.long_context = long
  }
  return priced
}

/**
 * The pricing a request with these options pays (docs/money.md#priced-options): its service tier's prices over the
 * model's, every token price times its speed's and its region's multipliers, and web search's price added to the per-request
 * price (billed once per request). Throws a TypeError when the model does not price an option;
 * src/chat/priced-fields.ts refuses such requests before that.
 */
export function pricingWithOptions(pricing: ModelPricing, options: PricedOptions): ModelPricing {
  let priced = pricing
  const tier = options.serviceTier
  if (tier != null && !PLAIN_TIERS.has(tier)) {
    const prices = pricing.service_tiers?.[tier]
    if (!prices) throw new TypeError(`service tier ${tier} is not priced`)
    priced = replaced(priced, prices)
  }
  const speed = options.speed
  if (speed != null && !PLAIN_SPEEDS.has(speed)) {
    const factor = pricing.speeds?.[speed]
    if (!factor) throw new TypeError(`speed ${speed} is not priced`)
    priced = scaled(priced, factor)
  }
  const geo = options.inferenceGeo
  if (geo != null && !PLAIN_GEOS.has(geo)) {
    const factor = pricing.inference_geos?.[geo]
    if (!factor) throw new TypeError(`inference_geo ${geo} is not priced`)
    priced = scaled(priced, factor)
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
  // Of the writes, those kept an hour (Anthropic's ttl "1h"), priced as such; never more than the writes.
  const writtenHour = bigMin(count(usage.prompt_tokens_details?.cache_write_1h_tokens), written)
  const promptTokens = count(usage.prompt_tokens)
  const uncached = promptTokens - cached - written > 0n ? promptTokens - cached - written : 0n
  const completionTokens = count(usage.completion_tokens)
  const reasoningTokens = pricing.internal_reasoning === undefined ? 0n : count(usage.completion_tokens_details?.reasoning_tokens)
  // Image output tokens (images in a chat answer) at the model's `image_output` price, where it has one (docs/images.md#images-in-chat).
  const room = completionTokens > reasoningTokens ? completionTokens - reasoningTokens : 0n
  const imageTokens = pricing.image_output === undefined ? 0n : bigMin(count(usage.completion_tokens_details?.image_tokens), room)
  const visibleTokens = completionTokens > reasoningTokens + imageTokens ? completionTokens - reasoningTokens - imageTokens : 0n

  const promptSide = sum([
    multiply(decimal(uncached), prompt),
    multiply(decimal(cached), price(pricing.input_cache_read, prompt)),
    multiply(decimal(written - writtenHour), price(pricing.input_cache_write, prompt)),
    multiply(decimal(writtenHour), price(pricing.input_cache_write_1h, price(pricing.input_cache_write, prompt))),
    multiply(decimal(count(extras.images)), price(pricing.image)),
    price(pricing.request),
    multiply(decimal(count(extras.webSearches)), price(pricing.web_search)),
  ])
  const completionSide = sum([
    multiply(decimal(visibleTokens), completion),
    multiply(decimal(reasoningTokens), price(pricing.internal_reasoning, completion)),
    multiply(decimal(imageTokens), price(pricing.image_output, completion)),
  ])
  const total = sum([promptSide, completionSide])
  return {
    currency: pricing.currency ?? 'USD',
    units: toLedgerUnits(total),
    eurUnits: toLedgerUnits(multiply(total, decimal(eurPerUnit))),
    promptUnits: toLedgerUnits(promptSide),
    completionUnits: toLedgerUnits(completionSide),
  }
}
