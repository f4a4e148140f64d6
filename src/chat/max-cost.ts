import type { MaxCost } from '../billing/holds'
import { priceUsage, pricingForPrompt } from '../billing/cost'
import { platformFee } from '../billing/byok-fees'
import { compare, decimal, multiply, toLedgerUnits } from '../billing/decimal'
import type { GatewayContext } from '../context'
import type { ModelPricing } from '../contracts'
import type { Attempt } from '../routing/plan'
import type { ChatRequest } from '../schemas/chat'
import { jsonByteLength } from '../http/json-size'
import { choicesOf } from './choices'

/** Completion tokens a hold assumes when neither the request nor the catalogue bounds them. */
export const DEFAULT_MAX_COMPLETION_TOKENS = 16_384

/**
 * The prompt tokens a hold assumes for an image given by URL (its bytes are not in the request): more than the
 * largest image costs on the providers the gateway serves (Anthropic about 1,600 tokens, OpenAI 1,105 at high detail,
 * Gemini 258 a tile), so that a request of many image URLs cannot hold a fraction of what it is billed (docs/money.md).
 */
export const IMAGE_URL_HOLD_TOKENS = 2_048

/** Counts the image parts of a request's messages (priced per image where the model has an image price). */
export function countImages(request: ChatRequest): number {
  return imagesOf(request).all
}

// The image parts of a request's messages, and those given by URL (not inline `data:`, whose bytes count as prompt).
function imagesOf(request: ChatRequest): { all: number; byUrl: number } {
  let all = 0
  let byUrl = 0
  for (const message of request.messages) {
    if (!Array.isArray(message.content)) continue
    for (const part of message.content as { type: string; image_url?: { url?: unknown } }[]) {
      if (part.type !== 'image_url') continue
      all++
      const url = part.image_url?.url
      if (!(typeof url === 'string' && url.startsWith('data:'))) byUrl++
    }
  }
  return { all, byUrl }
}

/** What the hold reads of a request's prompt: its tokens at most, and the longest cache write it asks for. */
export interface PromptFacts {
  tokens: number
  cacheWrites: 'none' | '5m' | '1h'
}

// Computed once per request (routing's max_price and the hold both read it; a long prompt is costly to serialise).
const promptFactsCache = new WeakMap<ChatRequest, PromptFacts>()

/** What the hold reads of a request's prompt (computed once per request). */
export function promptFacts(request: ChatRequest): PromptFacts {
  let facts = promptFactsCache.get(request)
  if (facts) return facts
  // The bytes of the messages, tools and response format as JSON, counted without writing them (a long prompt is
  // tens of KB: writing it only to count it cost more than parsing it).
  let bytes = jsonByteLength(request.messages) + (request.tools ? jsonByteLength(request.tools) : 0)
  if (request.response_format) bytes += jsonByteLength(request.response_format)
  const top = request.cache_control as { ttl?: string } | undefined
  const asked = top?.ttl === '1h' ? '1h' : maxCacheWrite(cacheWritesIn(request.messages, 0), request.tools ? cacheWritesIn(request.tools, 0) : 'none')
  const cacheWrites = top !== undefined ? maxCacheWrite(asked, '5m') : asked
  facts = { tokens: Math.ceil(bytes / 3) + imagesOf(request).byUrl * IMAGE_URL_HOLD_TOKENS, cacheWrites }
  promptFactsCache.set(request, facts)
  return facts
}

const CACHE_WRITE_RANK = { none: 0, '5m': 1, '1h': 2 } as const
const maxCacheWrite = (a: PromptFacts['cacheWrites'], b: PromptFacts['cacheWrites']): PromptFacts['cacheWrites'] =>
  CACHE_WRITE_RANK[a] >= CACHE_WRITE_RANK[b] ? a : b

// The longest cache write a part of the request asks for: a `cache_control` key anywhere (with a value JSON keeps)
// asks for one, of an hour when its value holds a `ttl` of "1h" at any depth (else 5 minutes).
function cacheWritesIn(value: unknown, depth: number): PromptFacts['cacheWrites'] {
  if (value === null || typeof value !== 'object' || depth > 256) return 'none'
  let found: PromptFacts['cacheWrites'] = 'none'
  if (Array.isArray(value)) {
    for (const item of value) if ((found = maxCacheWrite(found, cacheWritesIn(item, depth + 1))) === '1h') return found
    return found
  }
  for (const key of Object.keys(value)) {
    const inner = (value as Record<string, unknown>)[key]
    if (key === 'cache_control' && inner !== undefined && typeof inner !== 'function' && typeof inner !== 'symbol')
      found = maxCacheWrite(found, hasHourTtl(inner, depth + 1) ? '1h' : '5m')
    if (found === '1h') return found
    found = maxCacheWrite(found, cacheWritesIn(inner, depth + 1))
    if (found === '1h') return found
  }
  return found
}

// True when a `ttl` key of "1h" is anywhere in the value.
function hasHourTtl(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object' || depth > 256) return false
  if (Array.isArray(value)) return value.some((item) => hasHourTtl(item, depth + 1))
  for (const key of Object.keys(value)) {
    const inner = (value as Record<string, unknown>)[key]
    if ((key === 'ttl' && inner === '1h') || hasHourTtl(inner, depth + 1)) return true
  }
  return false
}

/** A prompt's tokens at most, from its size: one token per 3 bytes of UTF-8 (English runs near 4; CJK near 3), and IMAGE_URL_HOLD_TOKENS an image URL. */
export const maxPromptTokens = (request: ChatRequest): number => promptFacts(request).tokens

// The dearest price a prompt token may be billed at: a request with cache breakpoints may write every prompt token to
// the cache (Anthropic: 1.25× the input price for 5 minutes, 2× for an hour), so it holds at that price.
function promptPrice(pricing: ModelPricing, cacheWrites: PromptFacts['cacheWrites']): string {
  let dearest = pricing.prompt
  const dearer = (price: string | undefined) => {
    if (price !== undefined && compare(decimal(price), decimal(dearest)) > 0) dearest = price
  }
  if (cacheWrites !== 'none') dearer(pricing.input_cache_write)
  if (cacheWrites === '1h') dearer(pricing.input_cache_write_1h)
  return dearest
}

/** The completion tokens an attempt may produce: the request's max_tokens, else the model's maximum, else what its context leaves. */
export function maxCompletionTokens(request: ChatRequest, attempt: Attempt, promptTokens: number): number {
  const asked = request.max_completion_tokens ?? request.max_tokens
  const model = attempt.offer.model
  const room = model.contextLength ? Math.max(1, model.contextLength - promptTokens) : undefined
  const ceiling = model.maxCompletionTokens ?? room ?? DEFAULT_MAX_COMPLETION_TOKENS
  return asked ? Math.min(asked, Math.max(ceiling, 1)) : ceiling
}

// The dearest of visible, reasoning and (when the request asks for images) image output tokens, per token.
function completionPrice(pricing: ModelPricing, images: boolean): string {
  const { completion, internal_reasoning: reasoning, image_output: image } = pricing
  const text = reasoning !== undefined && compare(decimal(reasoning), decimal(completion)) > 0 ? reasoning : completion
  return images && image !== undefined && compare(decimal(image), decimal(text)) > 0 ? image : text
}

/** Whether a chat request asks for images in its answer (OpenRouter's `modalities: ["image", "text"]`). */
export const asksImages = (request: ChatRequest): boolean => {
  const modalities = (request as Record<string, unknown>).modalities
  return Array.isArray(modalities) && modalities.includes('image')
}

/**
 * The most a chat request can cost, in EUR, over every attempt it may be served by (docs/money.md): its prompt tokens
 * (estimated from its size), its completion tokens at most (for each of its `n` choices), its images and per-request
 * prices; a customer's key (BYOK) owes only the platform fee on that.
 */
export function maxChatCost(ctx: GatewayContext, request: ChatRequest, attempts: Attempt[]): MaxCost {
  const { tokens: prompt, cacheWrites } = promptFacts(request)
  const images = countImages(request)
  const feeRate = decimal(ctx.options.byok.platformFeeRate)
  // n choices may each produce the completion tokens of one (src/chat/choices.ts).
  const choices = choicesOf(request)
  const outputImages = asksImages(request)
  let worst: { eurUnits: bigint; attempt: Attempt; tokens: number } | undefined
  // With a customer's key, what a key whose limit counts BYOK usage holds: the upstream cost and the fee (docs/keys.md).
  let withByok = 0n
  // The most tokens any attempt may use, held on the tokens limits (docs/limits.md#tokens-spend-and-requests-in-flight).
  let mostTokens = 0
  for (const attempt of attempts) {
    // The prices a prompt this long is billed at (long-context ones past their threshold), at their dearest.
    const pricing = pricingForPrompt(attempt.offer.model.pricing, prompt)
    const tokens = maxCompletionTokens(request, attempt, prompt) * choices
    if (prompt + tokens > mostTokens) mostTokens = prompt + tokens
    const rate = ctx.options.exchangeRates[pricing.currency ?? 'USD']
    const cost = priceUsage(
      Object.assign({}, pricing, {
        long_context: undefined,
        prompt: promptPrice(pricing, cacheWrites),
        completion: completionPrice(pricing, outputImages),
        internal_reasoning: undefined,
      }),
      { prompt_tokens: prompt, completion_tokens: tokens },
      { images },
      rate,
    )
    const eurUnits = attempt.credential ? platformFee(ctx, cost.eurUnits) : cost.eurUnits
    if (!worst || eurUnits > worst.eurUnits) worst = { eurUnits, attempt, tokens }
    if (cost.eurUnits + (attempt.credential ? eurUnits : 0n) > withByok) withByok = cost.eurUnits + (attempt.credential ? eurUnits : 0n)
  }
  if (!worst) return { eurUnits: 0n }
  const { attempt, tokens } = worst
  const pricing = pricingForPrompt(attempt.offer.model.pricing, prompt)
  const rate = decimal(ctx.options.exchangeRates[pricing.currency ?? 'USD'])
  const fee = attempt.credential ? feeRate : decimal(1)
  // EUR units of one completion token, and of the request without completion tokens.
  const perToken = toLedgerUnits(multiply(multiply(decimal(completionPrice(pricing, outputImages)), rate), fee))
  const fixed = worst.eurUnits - perToken * BigInt(tokens)
  return {
    eurUnits: worst.eurUnits,
    withByokEurUnits: withByok,
    maxTotalTokens: mostTokens,
    // The 402 speaks of max_tokens, which is per choice: so are both counts.
    maxTokens: tokens / choices,
    affordableTokens: (available) => (perToken > 0n ? Math.floor(Number((available - fixed) / perToken) / choices) : tokens / choices),
  }
}
