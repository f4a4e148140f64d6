/** What `/providers` shows of a provider (api.md 2.8); the chat issue extends this into the full provider contract. */
export interface ProviderInfo {
  /** Stable slug, e.g. `openai`. */
  slug: string
  /** Display name. */
  name: string
  description?: string
  /** Whether customers may bring their own key for it (BYOK). */
  byokSupported?: boolean
}
