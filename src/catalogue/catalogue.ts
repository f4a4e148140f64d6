import { pathsOf, type Provider, type ProviderModel } from '../contracts'
import type * as v from 'valibot'
import type { Logger } from '../logger'
import { GatewayError } from '../errors'
import type { modelSchema, providerSchema } from '../schemas/catalogue'
import { dataPolicyFacts, dataPolicyOf, type DataPolicyFacts } from './data-policies'
import { knownAuthors } from './known-models'

/** A model as `/models` shows it (docs/catalogue.md#what-models-shows). */
export type CatalogueModel = v.InferOutput<typeof modelSchema>
/** A provider as `/providers` shows it (docs/catalogue.md#what-providers-shows). */
export type CatalogueProvider = v.InferOutput<typeof providerSchema>

/** One provider's offer of a model: what the router chooses among. */
export interface ModelOffer {
  provider: Provider
  model: ProviderModel
  /** The id sent upstream. */
  upstreamId: string
  /** What the provider's data policy says of prompts (`provider.zdr`, `data_collection`): resolved once, when the catalogue is built. */
  dataPolicy: DataPolicyFacts
}

/** A model of the catalogue with every provider that serves it. */
export interface CatalogueEntry {
  id: string
  offers: ModelOffer[]
  /** The API object, built once. */
  view: CatalogueModel
}

/** Options of the catalogue. */
export interface CatalogueOptions {
  providers: Provider[]
  overrides: Record<string, Partial<Omit<ProviderModel, 'id'>>>
  logger: Logger
  basePath: string
  /** Discovered models are refreshed this often. */
  refreshSeconds: number
  timeoutMs: number
  /** Current time in epoch ms: expiration dates and price changes take effect by it. */
  now: () => number
}

/** A model no provider serves any more: the day its last offer expired, and what to use instead (docs/catalogue.md). */
export interface Retirement {
  /** `YYYY-MM-DD`. */
  date: string
  replacement?: string
}

/** Epoch ms of the start (00:00 UTC) of a `YYYY-MM-DD` day. */
export const dayStart = (day: string): number => Date.parse(`${day}T00:00:00Z`)

/** The model as it stands at `now`: the latest announced price change in effect replaces its prices. */
function asOf(model: ProviderModel, now: number): ProviderModel {
  const change = model.priceChanges?.filter((c) => dayStart(c.from) <= now).sort((a, b) => dayStart(b.from) - dayStart(a.from))[0]
  return change ? { ...model, pricing: change.pricing } : model
}

const expired = (model: ProviderModel, now: number) => model.expirationDate !== undefined && dayStart(model.expirationDate) <= now

/** The model and provider catalogue built from the configured providers (and their discovered models). */
export function createCatalogue(options: CatalogueOptions) {
  const { providers, overrides, logger } = options
  const discovered = new Map<string, ProviderModel[]>()
  // When this gateway first listed each model id: the `created` of a model configured or discovered without a date.
  const firstListed = new Map<string, number>()
  let retired = new Map<string, Retirement>()
  // The next expiration or price change after the last build: the catalogue is built again once it passes.
  let nextChangeAt = Infinity
  let entries = build()
  let refreshedAt = 0
  let refreshing: Promise<void> | undefined

  function offersOf(provider: Provider): ProviderModel[] {
    const own = provider.models
    const extra = (discovered.get(provider.slug) ?? []).filter((m) => !own.some((o) => o.id === m.id))
    return [...own, ...extra].map((model) => (overrides[model.id] ? { ...model, ...overrides[model.id], id: model.id } : model))
  }

  // The entries as they stand now: expired offers are left out (a model with none left is retired), announced price
  // changes in effect replace the prices (docs/catalogue.md).
  function build(): Map<string, CatalogueEntry> {
    const now = options.now()
    const byId = new Map<string, ModelOffer[]>()
    const gone = new Map<string, ProviderModel[]>()
    nextChangeAt = Infinity
    for (const provider of providers) {
      const dataPolicy = dataPolicyFacts(provider)
      for (const listed of offersOf(provider)) {
        for (const day of [listed.expirationDate, ...(listed.priceChanges ?? []).map((c) => c.from)]) {
          const at = day === undefined ? NaN : dayStart(day)
          if (at > now && at < nextChangeAt) nextChangeAt = at
        }
        if (expired(listed, now)) {
          gone.set(listed.id, [...(gone.get(listed.id) ?? []), listed])
          continue
        }
        const model = asOf(listed, now)
        const offer = { provider, model, upstreamId: model.upstreamId ?? model.id.slice(model.id.indexOf('/') + 1), dataPolicy }
        byId.set(model.id, [...(byId.get(model.id) ?? []), offer])
      }
    }
    retired = new Map()
    for (const [id, models] of gone) {
      if (byId.has(id)) continue
      const last = models.reduce((a, b) => (dayStart(b.expirationDate!) > dayStart(a.expirationDate!) ? b : a))
      retired.set(id, {
        date: last.expirationDate!,
        ...(models.find((m) => m.replacement) ? { replacement: models.find((m) => m.replacement)!.replacement } : {}),
      })
    }
    const result = new Map<string, CatalogueEntry>()
    const listedAt = Math.floor(Date.now() / 1000)
    for (const [id, offers] of byId) {
      if (!firstListed.has(id)) firstListed.set(id, listedAt)
      result.set(id, { id, offers, view: toView(id, offers, options.basePath, firstListed.get(id)!) })
    }
    return result
  }
  // Entries current at this moment: built again once an expiration or a price change took effect.
  const current = () => {
    if (options.now() >= nextChangeAt) entries = build()
    return entries
  }

  async function refresh(): Promise<void> {
    const discovering = providers.filter((p) => p.discoverModels)
    if (!discovering.length) return
    await Promise.all(
      discovering.map(async (provider) => {
        try {
          const models = await provider.discoverModels!({ signal: AbortSignal.timeout(options.timeoutMs), timeoutMs: options.timeoutMs })
          discovered.set(provider.slug, models)
        } catch (error) {
          logger.warn(`could not list the models of ${provider.slug}`, { error: (error as Error).message })
        }
      }),
    )
    entries = build()
  }

  return {
    /**
     * Waits for discovered models when some provider discovers them and the list is older than the refresh interval;
     * undefined (nothing to wait for, no promise) otherwise.
     */
    ready(): Promise<void> | undefined {
      if (!providers.some((p) => p.discoverModels)) return undefined
      if (Date.now() - refreshedAt < options.refreshSeconds * 1000) return undefined
      refreshing ??= refresh().finally(() => {
        refreshedAt = Date.now()
        refreshing = undefined
      })
      return refreshing
    },
    /** The catalogue entry of a model id, or undefined. */
    get: (id: string): CatalogueEntry | undefined => current().get(id),
    /** The entry of a model id; 404 naming the replacement for a retired model, else pointing to `/models`. */
    require(id: string, param = 'model'): CatalogueEntry {
      const entry = current().get(id)
      if (entry) return entry
      const gone = retired.get(id)
      if (!gone) throw new GatewayError(404, `Model ${id} is not available on this gateway (see GET ${options.basePath}/models)`, { param })
      const instead = gone.replacement && current().has(gone.replacement) ? gone.replacement : undefined
      throw new GatewayError(404, `Model ${id} was retired by its provider on ${gone.date}${instead ? `; use ${instead} instead` : ''}`, {
        param,
        metadata: { retired_on: gone.date, replacement: instead ?? null },
      })
    },
    /** Every entry, newest first. */
    entries: (): CatalogueEntry[] => [...current().values()].sort((a, b) => b.view.created - a.view.created || a.id.localeCompare(b.id)),
    /** The providers as `/providers` shows them. */
    providers(): CatalogueProvider[] {
      return providers.map((p) => ({
        id: p.slug,
        name: p.name,
        slug: p.slug,
        description: p.description ?? '',
        model_count: offersOf(p).length,
        privacy_policy_url: p.privacyPolicyUrl ?? null,
        terms_of_service_url: p.termsOfServiceUrl ?? null,
        status_page_url: p.statusPageUrl ?? null,
        region: p.region ?? null,
        enabled: true,
        headquarters: p.headquarters ?? null,
        icon_url: p.iconUrl ?? null,
        data_policy: dataPolicyOf(p) ?? {},
        byok: { supported: p.byokSupported ?? false },
      }))
    },
  }
}

/** The catalogue's operations. */
export type Catalogue = ReturnType<typeof createCatalogue>

/** A usable release time: a positive number of epoch seconds (whole), else undefined. */
const releaseTime = (created: unknown): number | undefined =>
  typeof created === 'number' && Number.isFinite(created) && created >= 1 ? Math.floor(created) : undefined

// OpenRouter's expiration_date: the day the last offer goes, when every offer has one; null while one has none.
function expirationOf(offers: ModelOffer[]): string | null {
  const days = offers.map((o) => o.model.expirationDate)
  if (days.some((d) => d === undefined)) return null
  return (days as string[]).reduce((a, b) => (dayStart(b) > dayStart(a) ? b : a))
}

function toView(id: string, offers: ModelOffer[], basePath: string, listedAt: number): CatalogueModel {
  // The first offer describes the model; prices shown are the cheapest offer's.
  const model = offers[0].model
  const cheapest = [...offers].sort(
    (a, b) => Number(a.model.pricing.prompt) + Number(a.model.pricing.completion) - Number(b.model.pricing.prompt) - Number(b.model.pricing.completion),
  )[0].model
  const [author, ...rest] = id.split('/')
  const slug = rest.join('/') || author
  const input = model.inputModalities ?? ['text']
  const output = model.outputModalities ?? ['text']
  const authorFacts = knownAuthors[author]
  const p = cheapest.pricing
  const contextLength = Math.max(...offers.map((o) => o.model.contextLength ?? 0))
  // The release time of the first offer that has one; a model no offer dates shows when it was first listed (docs/catalogue.md#release-dates).
  const released = offers.map((o) => releaseTime(o.model.created)).find((t) => t !== undefined)
  return {
    id,
    object: 'model',
    canonical_slug: id,
    hugging_face_id: model.huggingFaceId ?? '',
    name: model.name ?? id,
    created: released ?? listedAt,
    description: model.description ?? '',
    context_length: contextLength,
    pricing: {
      prompt: p.prompt,
      completion: p.completion,
      request: p.request ?? '0',
      image: p.image ?? '0',
      image_token: '0',
      image_output: p.image_output ?? '0',
      audio: p.audio ?? '0',
      input_audio_cache: '0',
      web_search: p.web_search ?? '0',
      internal_reasoning: p.internal_reasoning ?? '0',
      input_cache_read: p.input_cache_read ?? p.prompt,
      input_cache_write: p.input_cache_write ?? p.prompt,
      ...(p.character !== undefined ? { character: p.character } : {}),
      ...(p.audio_second !== undefined ? { audio_second: p.audio_second } : {}),
      currency: p.currency ?? 'USD',
      discount: 0,
    },
    architecture: {
      modality: `${input.join('+')}->${output.join('+')}`,
      input_modalities: input,
      output_modalities: output,
      tokenizer: 'Other',
      instruct_type: null,
    },
    top_provider: { context_length: model.contextLength ?? contextLength, max_completion_tokens: model.maxCompletionTokens ?? null, is_moderated: false },
    per_request_limits: null,
    supported_parameters: [...new Set(offers.flatMap((o) => o.model.supportedParameters ?? []))],
    supported_voices: model.supportedVoices ?? [],
    knowledge_cutoff: model.knowledgeCutoff ?? null,
    release_date: model.releaseDate ?? (released ? new Date(released * 1000).toISOString().slice(0, 10) : null),
    last_updated: null,
    reasoning: {
      mandatory: model.reasoning?.mandatory ?? false,
      supported_efforts: model.reasoning?.efforts ?? [],
      supports_max_tokens: model.reasoning?.supportsMaxTokens ?? false,
    },
    expiration_date: expirationOf(offers),
    links: { details: model.detailsUrl ?? `${basePath}/models` },
    supported_api_endpoints: pathsOf(model).map((e) => `${basePath}${e}`),
    default_parameters: {},
    author,
    slug,
    tags: model.tags ?? [],
    providers: offers.map((o) => ({ name: o.provider.name, slug: o.provider.slug })),
    author_info: {
      slug: author,
      name: authorFacts?.name ?? author,
      display_name: authorFacts?.name ?? author,
      icon_url: '',
      gradient_from: '',
      gradient_to: '',
      gradient_via: '',
      website_url: authorFacts?.websiteUrl ?? '',
    },
  }
}
