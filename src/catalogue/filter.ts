import type { CatalogueEntry } from './catalogue'

/** The filters of GET /models (api.md 4.5, decisions.md §5). */
export interface ModelFilters {
  /** Keeps models whose `tags` include it (case-insensitive). */
  category?: string
  /** Comma list: keeps models that support every one. */
  supported_parameters?: string
  /** Keeps models this provider slug serves. */
  provider?: string
}

/** Applies the /models filters to catalogue entries, keeping their order. */
export function filterModels(entries: CatalogueEntry[], filters: ModelFilters): CatalogueEntry[] {
  const category = filters.category?.trim().toLowerCase()
  const required = (filters.supported_parameters ?? '').split(',').map((s) => s.trim()).filter(Boolean)
  const provider = filters.provider?.trim().toLowerCase()
  return entries.filter((entry) => {
    if (category && !entry.view.tags.some((tag) => tag.toLowerCase() === category)) return false
    if (required.length && !required.every((p) => entry.view.supported_parameters.includes(p))) return false
    if (provider && !entry.offers.some((o) => o.provider.slug.toLowerCase() === provider)) return false
    return true
  })
}
