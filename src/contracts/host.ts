import type { ProviderModel } from './model'

/** A provider's facts for `/providers` and the catalogue, and its API root (docs/providers.md). */
export interface HostFacts {
  slug: string
  name: string
  description?: string
  /** API root (OpenAI-compatible hosts: including the version, e.g. `https://api.groq.com/openai/v1`). */
  baseURL: string
  headquarters?: string
  privacyPolicyUrl?: string
  termsOfServiceUrl?: string
  statusPageUrl?: string
}

/**
 * What a provider does with prompts and completions: `Provider.dataPolicy`, shown as `data_policy` by `/providers`
 * and read by `provider.zdr` and `provider.data_collection` (docs/routing.md "Provider preferences").
 */
export interface DataPolicy {
  /** It may train or improve its models on prompts and completions. */
  training: boolean
  /** It may keep prompts or completions after answering (abuse monitoring, logs); `false` is zero data retention. */
  retains_prompts: boolean
  /** How long at most, in days, when it keeps them and says for how long. */
  retention_days?: number
  /** The page that says so, and the day (`YYYY-MM-DD`) it was read there. */
  source: string
  checked: string
  note?: string
}

/** A host as it is written once, in one file (docs/providers.md#adding-a-host): its facts, its data policy and its models. */
export interface Host extends HostFacts {
  /**
   * Its default data policy, from its own terms for API use with a service key and no special agreement. None: it
   * counts as a host that may train and retain (as OpenRouter does).
   */
  dataPolicy?: DataPolicy
  /** The models it serves, with their list prices (default: none). */
  models?: ProviderModel[]
}
