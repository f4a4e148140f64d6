/** Prices of a model as exact decimal strings per token (per unit for `request`, `image`, `web_search`), in `currency`. */
export interface ModelPricing {
  prompt: string
  completion: string
  request?: string
  image?: string
  image_output?: string
  /** Per audio input token (transcription: `input_token_details.audio_tokens`); `prompt` prices text input tokens, `completion` output tokens (speech: audio output tokens). */
  audio?: string
  web_search?: string
  internal_reasoning?: string
  input_cache_read?: string
  /** Per prompt token written to the cache (Anthropic: a 5-minute write). Default: `prompt`. */
  input_cache_write?: string
  /** Per prompt token written to the cache for an hour (Anthropic's `cache_control.ttl: "1h"`); without it such writes are refused (docs/money.md#priced-options). */
  input_cache_write_1h?: string
  /** Per second of input audio (transcription), when the upstream reports no token usage. */
  audio_second?: string
  /** Per character of input text (speech), when the upstream reports no token usage. */
  character?: string
  /** ISO currency of these prices. Default `USD`. */
  currency?: string
  /**
   * Other per-token prices for a whole request whose prompt is longer than `above_prompt_tokens` (Gemini above 200K,
   * OpenAI's GPT-6 above 272K), each replacing the price it names (docs/catalogue.md).
   */
  long_context?: LongContextPricing
  /**
   * Prices of the service tiers a request may ask for with `service_tier` (`priority`, `flex`, …), each replacing the
   * prices it gives. A tier that is not listed here is refused (400), so it is never billed at the plain price
   * (docs/limits.md); `auto` and `default` are the plain price.
   */
  service_tiers?: Record<string, ServiceTierPricing>
  /**
   * Multipliers of every token price for Anthropic's `speed` options (fast mode: `{ fast: "6" }`); `standard` and none
   * are the plain price, a speed not listed is refused (400), as an unlisted service tier is (docs/money.md#priced-options).
   */
  speeds?: Record<string, string>
  /**
   * Multipliers of every token price for Anthropic's `inference_geo` values (`us`: `"1.1"`); `global` and none are the
   * plain price, a value not listed is refused (400) (docs/money.md#priced-options).
   */
  inference_geos?: Record<string, string>
}

/** The prices of a request with a long prompt: from `above_prompt_tokens` + 1 prompt tokens on, for the whole request. */
export type LongContextPricing = { above_prompt_tokens: number } & Partial<
  Pick<ModelPricing, 'prompt' | 'completion' | 'input_cache_read' | 'input_cache_write' | 'input_cache_write_1h' | 'internal_reasoning'>
>

/** What a service tier costs: the per-token prices that differ from the model's plain ones. */
export type ServiceTierPricing = Partial<Pick<ModelPricing, 'prompt' | 'completion' | 'input_cache_read' | 'input_cache_write' | 'input_cache_write_1h'>>

/** A price change a provider announced: from the day `from` (`YYYY-MM-DD`, UTC) on, `pricing` applies. */
export interface PriceChange {
  from: string
  pricing: ModelPricing
  note?: string
}
