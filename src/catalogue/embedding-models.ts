import type { ProviderModel } from '../providers/types'

/** Embedding models per provider slug (`openai`, `google`, `mistral`, `together`), merged into each provider's known models. */
export const embeddingModels: Record<'openai' | 'google' | 'mistral' | 'together', ProviderModel[]> = {
  openai: [],
  google: [],
  mistral: [],
  together: [],
}
