import type * as v from 'valibot'
import type { Logger } from '../logger'
import type { Provider, ProviderModel } from '../providers/types'
import type { modelSchema, providerSchema } from '../schemas/catalogue'
import { knownAuthors } from './known-models'

/** A model as `/models` shows it (api.md 2.7). */
export type CatalogueModel = v.InferOutput<typeof modelSchema>
/** A provider as `/providers` shows it (api.md 2.8). */
export type CatalogueProvider = v.InferOutput<typeof providerSchema>

/** One provider's offer of a model: what the router chooses among. */
export interface ModelOffer {
  provider: Provider
  model: ProviderModel
  /** The id sent upstream. */
  upstreamId: string
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
}

const DEFAULT_ENDPOINT = '/chat/completions'

/** The model and provider catalogue built from the configured providers (and their discovered models). */
export function createCatalogue(options: CatalogueOptions) {
  const { providers, overrides, logger } = options
  const discovered = new Map<string, ProviderModel[]>()
  // When this gateway first listed each model id: the `created` of a model configured or discovered without a date.
  const firstListed = new Map<string, number>()
  let entries = build()
  let refreshedAt = 0
  let refreshing: Promise<void> | undefined

  function offersOf(provider: Provider): ProviderModel[] {
    const own = provider.models
    const extra = (discovered.get(provider.slug) ?? []).filter((m) => !own.some((o) => o.id === m.id))
    return [...own, ...extra].map((model) => (overrides[model.id] ? { ...model, ...overrides[model.id], id: model.id } : model))
  }

  function build(): Map<string, CatalogueEntry> {
    const byId = new Map<string, ModelOffer[]>()
    for (const provider of providers) {
      for (const model of offersOf(provider)) {
        const offer = { provider, model, upstreamId: model.upstreamId ?? model.id.slice(model.id.indexOf('/') + 1) }
        byId.set(model.id, [...(byId.get(model.id) ?? []), offer])
      }
    }
    const result = new Map<string, CatalogueEntry>()
    const now = Math.floor(Date.now() / 1000)
    for (const [id, offers] of byId) {
      if (!firstListed.has(id)) firstListed.set(id, now)
      result.set(id, { id, offers, view: toView(id, offers, options.basePath, firstListed.get(id)!) })
    }
    return result
  }

  async function refresh(): Promise<void> {
    const discovering = providers.filter((p) => p.discoverModels)
    if (!discovering.length) return
    await Promise.all(discovering.map(async (provider) => {
      try {
        const models = await provider.discoverModels!({ signal: AbortSignal.timeout(options.timeoutMs), timeoutMs: options.timeoutMs })
        discovered.set(provider.slug, models)
      } catch (error) {
        logger.warn(`could not list the models of ${provider.slug}`, { error: (error as Error).message })
      }
    }))
    entries = build()
  }

  return {
    /** Waits for discovered models when some provider discovers them and the list is older than the refresh interval. */
    async ready(): Promise<void> {
      if (!providers.some((p) => p.discoverModels)) return
      if (Date.now() - refreshedAt < options.refreshSeconds * 1000) return
      refreshing ??= refresh().finally(() => {
        refreshedAt = Date.now()
        refreshing = undefined
      })
      await refreshing
    },
    /** The catalogue entry of a model id, or undefined. */
    get: (id: string): CatalogueEntry | undefined => entries.get(id),
    /** Every entry, newest first. */
    entries: (): CatalogueEntry[] => [...entries.values()].sort((a, b) => b.view.created - a.view.created || a.id.localeCompare(b.id)),
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
        data_policy: p.dataPolicy ?? {},
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

function toView(id: string, offers: ModelOffer[], basePath: string, listedAt: number): CatalogueModel {
  // The first offer describes the model; prices shown are the cheapest offer's.
  const model = offers[0].model
  const cheapest = [...offers].sort((a, b) => Number(a.model.pricing.prompt) + Number(a.model.pricing.completion) - Number(b.model.pricing.prompt) - Number(b.model.pricing.completion))[0].model
  const [author, ...rest] = id.split('/')
  const slug = rest.join('/') || author
  const input = model.inputModalities ?? ['text']
  const output = model.outputModalities ?? ['text']
  const authorFacts = knownAuthors[author]
  const p = cheapest.pricing
  const contextLength = Math.max(...offers.map((o) => o.model.contextLength ?? 0))
  // The release time of the first offer that has one; a model no offer dates shows when it was first listed (README, "The model catalogue").
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
    architecture: { modality: `${input.join('+')}->${output.join('+')}`, input_modalities: input, output_modalities: output, tokenizer: 'Other', instruct_type: null },
    top_provider: { context_length: model.contextLength ?? contextLength, max_completion_tokens: model.maxCompletionTokens ?? null, is_moderated: false },
    per_request_limits: null,
    supported_parameters: [...new Set(offers.flatMap((o) => o.model.supportedParameters ?? []))],
    supported_voices: model.supportedVoices ?? [],
    knowledge_cutoff: model.knowledgeCutoff ?? null,
    release_date: model.releaseDate ?? (released ? new Date(released * 1000).toISOString().slice(0, 10) : null),
    last_updated: null,
    reasoning: { mandatory: model.reasoning?.mandatory ?? false, supported_efforts: model.reasoning?.efforts ?? [], supports_max_tokens: model.reasoning?.supportsMaxTokens ?? false },
    expiration_date: null,
    links: { details: model.detailsUrl ?? `${basePath}/models` },
    supported_api_endpoints: (model.endpoints ?? [DEFAULT_ENDPOINT]).map((e) => `${basePath}${e}`),
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
