import type { ModelPricing, ModelSource } from '../../contracts'

/*
 * Helpers of the shipped model lists (the hosts of src/providers/hosts/ and the lists next to them): published list
 * prices in USD per token, release days and the page each entry relies on.
 *
 * Checked on 2026-11-26 against public copies of the providers' pricing and deprecation pages, OpenRouter's model
 * pages and LiteLLM's price table; each entry's `source` names the page relied on and says in its `note` what is
 * derived or unsettled. Values marked "per the 2026-11-26 audit" were not re-read line by line. Override prices in
 * `createGateway({ modelOverrides })` when your contract differs.
 *
 * Retirements: `expirationDate` is the day the provider stops serving the model (from that UTC day the offer is not
 * routed); `replacement` is the model to use instead, always one listed in this catalogue.
 */

/** The day the shipped prices were checked. */
export const CHECKED = '2026-11-26'

/** A price in USD per million tokens as an exact decimal string per token. */
export const perMillion = (usd: number): string => (usd / 1_000_000).toFixed(12).replace(/0+$/, '').replace(/\.$/, '')

/** Input and output prices (and the cached input price) in USD per million tokens, as a model's pricing. */
export const price = (input: number, output: number, cachedInput?: number): ModelPricing => ({
  prompt: perMillion(input),
  completion: perMillion(output),
  ...(cachedInput === undefined ? {} : { input_cache_read: perMillion(cachedInput) }),
  currency: 'USD',
})

/** Epoch seconds of the start (00:00 UTC) of a `YYYY-MM-DD` day. */
export const epoch = (date: string): number => Date.parse(`${date}T00:00:00Z`) / 1000

/** Where an entry's prices and facts were read, on the day they were checked. */
export const source = (url: string, note?: string): ModelSource => ({ url, checked: CHECKED, ...(note ? { note } : {}) })

/** The request parameters every chat model of an OpenAI-compatible host honours. */
export const CHAT = ['max_tokens', 'temperature', 'top_p', 'stop', 'seed', 'frequency_penalty', 'presence_penalty', 'response_format', 'tools', 'tool_choice']

/** The parameters of open-weights models served by Together and Fireworks: the chat ones and their samplers. */
export const OPEN_WEIGHTS = [...CHAT, 'top_k', 'repetition_penalty', 'min_p', 'logprobs', 'top_logprobs']
