import type { BilledChat } from '../chat/billing'
import type { PricedField } from '../chat/priced-fields'
import type { ChatRendering } from '../chat/result'
import type { StreamDialect } from '../pipeline/stream'
import type { NativeApi, NativeEvent, UpstreamUsage } from '../contracts'
import type { Attempt } from '../routing/plan'

type Json = Record<string, unknown>

/** What a whole native answer's rewrite receives: the attempt that served it, the generation and its billed usage. */
export interface ServedNative {
  attempt: Attempt
  generationId: string
  /** The usage as chat shows it (docs/chat.md#usage-and-cost): tokens, cost, currency. */
  usage: Json
}

/**
 * How a client API is served natively (docs/native.md): when every attempt's provider speaks it, the client's request
 * goes to the provider unchanged (but for the model id) and its answer comes back in the same API, billed, routed
 * and recorded as chat is; else chat's typed result is written in the API by `translated`.
 */
export interface NativeRoute {
  api: NativeApi
  /** The client's headers of the API (the provider passes on those it declares: docs/native.md#messages). */
  headers?: Record<string, string>
  /**
   * Fields of the client's request that change the provider's price and have no chat equivalent (Anthropic's `speed`,
   * `inference_geo`, one-hour cache writes): priced from the catalogue or refused, as chat's own are (docs/money.md#priced-options).
   */
  pricedFields?: readonly PricedField[]
  /** The body sent to the attempt's provider: the client's request with the provider's model id. */
  body(attempt: Attempt): Json
  /** The usage a whole answer reports, in chat's names; undefined when it reports none. */
  usageOf(answer: Json): UpstreamUsage | undefined
  /** The provider's own finish reason of a whole answer. */
  finishReasonOf(answer: Json): string | null
  /** The whole answer as the client receives it, once billed. */
  answer(answer: Json, served: ServedNative): Promise<Json> | Json
  /** The dialect of the API's stream (one per request). */
  dialect(generationId: string): StreamDialect<NativeEvent, BilledChat>
  /** How chat's typed result is written in the API (the path taken when some attempt's provider does not speak it). */
  translated: ChatRendering
}

const COST_FIELDS = ['cost', 'cost_currency', 'cost_eur', 'is_byok', 'cost_details', 'estimated']

/**
 * A native answer's usage with the gateway's cost fields (docs/native.md#usage-and-cost): the provider's own counts
 * as it sent them, then `cost`, `cost_currency`, `cost_eur`, `is_byok`, `cost_details` (and `estimated`) of the
 * billed usage; when the provider sent none, `counts` (the billed usage in the API's names).
 */
export function withCostFields(usage: unknown, billed: Json, counts: () => Json | null): Json | null {
  if (!usage || typeof usage !== 'object') return counts()
  const out: Json = { ...(usage as Json) }
  for (const key of COST_FIELDS) if (billed[key] !== undefined) out[key] = billed[key]
  return out
}

/** True when every attempt's provider speaks the API natively; else the request is translated (docs/native.md#when-a-request-goes-natively). */
export const speaksNatively = (attempts: Attempt[], api: NativeApi): boolean => attempts.every((attempt) => attempt.offer.provider.native?.[api] !== undefined)
