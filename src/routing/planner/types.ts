import type { Capability } from '../../contracts'
import type { CatalogueEntry, ModelOffer } from '../../catalogue/catalogue'
import type { ProviderPreferences } from '../../schemas/provider-preferences'
import type { ProviderKeys, RequestKey } from '../../http/provider-keys'
import type { CredentialRecord } from '../../stores/byok'
import type { MergedRules } from '../../policies/rules'

/** One way to serve the request: a model entry, one provider's offer of it, and the customer's key for it (BYOK) or the service's. */
export interface Attempt {
  entry: CatalogueEntry
  offer: ModelOffer
  credential?: CredentialRecord
  /**
   * The key the request itself gave for this provider (docs/byok.md#keys-for-one-request); `credential` is then its
   * stand-in (id `request`, nothing sealed), so that billing and limits treat it as any customer's key.
   */
  requestKey?: RequestKey
}

/** A provider's offer of one model of the request, before credentials are chosen. */
export interface Candidate {
  entry: CatalogueEntry
  offer: ModelOffer
}

/** What routing needs to know of a request, whatever its capability (docs/routing.md). */
export interface RoutingRequest {
  /** What the request asks: only offers whose model and provider serve it are planned. */
  capability: Capability
  /** The model asked for, then its fallbacks (`models`). */
  model?: string | null
  models?: string[] | null
  /** OpenRouter's provider preferences. */
  provider?: ProviderPreferences | null
  /** The model parameters the request uses, which `provider.require_parameters` asks offers to support. */
  parameters?: string[]
  /** Leaves out offers that cannot take this request (a voice the model's provider lacks); 503 when none is left. */
  accept?: (offer: ModelOffer) => boolean
  /**
   * The prompt's tokens at most (the hold's estimate): `provider.max_price` is compared with the prices a prompt this
   * long is billed at (a model's long-context prices past their threshold: docs/routing.md).
   */
  promptTokens?: number
}

/** A provider and model as the router's health is read for planning (the service's key). */
export interface OfferKey {
  provider: string
  model: string
}

/** Percentiles (nearest rank) of the health window's latencies (ms) or completion tokens per second. */
export interface Percentiles {
  p50: number
  p75: number
  p90: number
  p99: number
}

/** What the planner reads of the router's health, as the requesting org sees it (docs/routing.md#health-and-the-circuit-breaker). */
export interface HealthView {
  /** 0 healthy or due for its probe, 1 failed recently, 2 cooling down or probing. */
  penalty(key: OfferKey): number
  /** Median latency (ms) of the window's successes, or null. */
  latency(key: OfferKey): number | null
  /** Median completion tokens per second, or null. */
  throughput(key: OfferKey): number | null
  /** The window's percentiles of latency (ms) or throughput, or null before any success. */
  percentiles(key: OfferKey, metric: 'latency' | 'throughput'): Percentiles | null
}

/** The calling key as BYOK credentials' allowances name it. */
export interface CallingKey {
  hash: string
  user_id: string
}

/** Everything a plan is made of, as plain data (docs/routing.md#the-attempts-of-a-request). */
export interface PlanInput {
  request: RoutingRequest
  /** The catalogue entries of the request's models: its model, then its `models` fallbacks, each once. */
  entries: CatalogueEntry[]
  /** Every entry of the catalogue (newest first): read only to name the models that serve the capability in a 400. */
  catalogue: () => CatalogueEntry[]
  /** The router's health for the requesting org. */
  health: HealthView
  /** The org's BYOK credentials (sorted), the calling key and the request's own provider keys; absent when nobody calls (no principal: no credential applies). */
  byok?: { credentials: CredentialRecord[]; key: CallingKey; requestKeys?: ProviderKeys }
  /** The built-in rules of the caller's org, user and key (docs/policies.md#built-in-rules); absent: none. */
  rules?: MergedRules
}

/** An offer left out of the plan and why; `preference` names the request's `provider.…` field that excluded it, if one did. */
export interface LeftOut {
  provider: string
  model: string
  preference?: string
  reason: string
}

/** One preference of the request that excluded one provider's offer (the 404's `metadata.excluded`, docs/routing.md). */
export interface Exclusion {
  provider: string
  model: string
  /**
   * The `provider.…` field: `ignore`, `only`, `order`, `require_parameters`, `max_price`, `zdr`, `data_collection`,
   * `quantizations`; or the rule `allowed_providers` (docs/policies.md#built-in-rules).
   */
  preference: string
  reason: string
}
