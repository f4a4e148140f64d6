import type { CatalogueEntry, ModelOffer } from '../../src/catalogue/catalogue'
import type { DataPolicyFacts } from '../../src/catalogue/data-policies'
import type { ModelPricing, Provider, ProviderModel } from '../../src/contracts'
import type { ProviderKeys } from '../../src/http/provider-keys'
import { plan } from '../../src/routing/planner'
import type { Attempt, HealthView, Percentiles, PlanInput, RoutingRequest } from '../../src/routing/planner/types'
import type { CredentialRecord } from '../../src/stores/byok'

// Plain-data inputs of the planner (src/routing/planner): providers, offers, entries, a health table and
// credentials, built without a gateway, a catalogue or storage.

const never = (): never => {
  throw new Error('the planner never calls a provider')
}

/** A chat provider (embeddings too with `embed: true`) that is never called: only its slug and facts matter to the planner. */
export function providerOf(slug: string, facts: Partial<Omit<Provider, 'slug' | 'embed'>> & { embed?: boolean } = {}): Provider {
  const { embed, ...rest } = facts
  return { slug, name: slug.toUpperCase(), models: [], chat: never, chatStream: never, ...(embed ? { embed: never } : {}), ...rest }
}

/** USD per token for prompt and completion alike. */
export const usd = (price: string): ModelPricing => ({ prompt: price, completion: price, currency: 'USD' })

/** An offer of a provider at prices, with the facts of its data policy (default: it does not say). */
export function offerOf(provider: Provider, model: Partial<ProviderModel> = {}, dataPolicy: DataPolicyFacts = {}): ModelOffer {
  return { provider, model: { id: 'x', pricing: usd('0.000001'), ...model }, upstreamId: 'upstream', dataPolicy }
}

/** A catalogue entry (its `/models` view is not read by the planner). */
export const entryOf = (id: string, offers: ModelOffer[]): CatalogueEntry => ({ id, offers, view: undefined as never })

/** Measurements of one provider and model (the service's key); absent: healthy and not measured yet. */
export interface Measured {
  penalty?: number
  latency?: number
  throughput?: number
  latencies?: Percentiles
  speeds?: Percentiles
}

/** A health view from a table keyed `"<provider> <model>"`. */
export function healthOf(table: Record<string, Measured> = {}): HealthView {
  const of = (key: { provider: string; model: string }) => table[`${key.provider} ${key.model}`] ?? {}
  return {
    penalty: (key) => of(key).penalty ?? 0,
    latency: (key) => of(key).latency ?? null,
    throughput: (key) => of(key).throughput ?? null,
    percentiles: (key, metric) => (metric === 'latency' ? of(key).latencies : of(key).speeds) ?? null,
  }
}

/** Percentiles from p50 to p99. */
export const pct = (p50: number, p75: number, p90: number, p99: number): Percentiles => ({ p50, p75, p90, p99 })

/** A BYOK credential of org `o1` for a provider, applying to everything unless restricted. */
export function credentialOf(id: string, provider: string, fields: Partial<CredentialRecord> = {}): CredentialRecord {
  return {
    id,
    org_id: 'o1',
    provider,
    name: id,
    label: id,
    allowed_api_key_hashes: [],
    allowed_models: [],
    always_use: false,
    is_fallback: false,
    disabled: false,
    sort_order: 0,
    created_at: '2026-01-01T00:00:00.000Z',
    sealed_key: 'sealed',
    ...fields,
  }
}

/** The calling key of the plans: hash `h1`, user `u1`. */
export const KEY = { hash: 'h1', user_id: 'u1' }

/** Plans a chat request for `entries` (the first is `model`, the others `models`), with a health table and credentials. */
export function planChat(
  entries: CatalogueEntry[],
  request: Partial<RoutingRequest> = {},
  more: { health?: Record<string, Measured>; credentials?: CredentialRecord[]; catalogue?: CatalogueEntry[]; requestKeys?: ProviderKeys } = {},
): Attempt[] {
  const input: PlanInput = {
    request: { capability: 'chat', model: entries[0]?.id, models: entries.slice(1).map((e) => e.id), ...request },
    entries,
    catalogue: () => more.catalogue ?? entries,
    health: healthOf(more.health),
    byok: more.credentials ? { credentials: more.credentials, key: KEY, requestKeys: more.requestKeys } : undefined,
  }
  return plan(input)
}

/** Each attempt as `provider`, `provider:credential`, and ` model` after it when `withModel`. */
export const labels = (attempts: Attempt[], withModel = false): string[] =>
  attempts.map((a) => `${a.offer.provider.slug}${a.credential ? `:${a.credential.id}` : ''}${withModel ? ` ${a.entry.id}` : ''}`)

/** The error `run` throws (the test fails when it throws none). */
export function thrownBy(run: () => unknown): { status: number; message: string; param?: string; metadata?: Record<string, unknown> } {
  try {
    run()
  } catch (error) {
    return error as { status: number; message: string; param?: string; metadata?: Record<string, unknown> }
  }
  throw new Error('expected a refusal, got attempts')
}
