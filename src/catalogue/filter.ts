import { type Capability, offerServes } from '../contracts'
import type { CatalogueEntry } from './catalogue'

/** The filters of GET /models (docs/catalogue.md#filters-pages-and-rss). */
export interface ModelFilters {
  /** Keeps models whose `tags` include it (case-insensitive). */
  category?: string
  /** Comma list: keeps models that support every one. */
  supported_parameters?: string
  /** Keeps models this provider slug serves. */
  provider?: string
  /** Comma list (OpenRouter's `input_modalities`): keeps models that accept any of them. */
  input_modalities?: string
  /** Comma list (OpenRouter's `output_modalities`): keeps models that produce any of them; `all` (or none given) keeps every model. */
  output_modalities?: string
}

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean)
// A modality filter: undefined (keep all) when absent or `all`, else the wanted modalities.
const modalities = (value: string | undefined) => {
  const wanted = list(value)
  return wanted.length && !wanted.includes('all') ? wanted : undefined
}
const hasAny = (offered: string[], wanted: string[]) => offered.some((m) => wanted.includes(m.toLowerCase()))

/**
 * Applies the /models filters to catalogue entries, keeping their order. Unlike OpenRouter, whose `/models` lists
 * text-output models unless `output_modalities` says otherwise, no modality filter lists every model.
 */
export function filterModels(entries: CatalogueEntry[], filters: ModelFilters): CatalogueEntry[] {
  const category = filters.category?.trim().toLowerCase()
  const required = (filters.supported_parameters ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const provider = filters.provider?.trim().toLowerCase()
  const input = modalities(filters.input_modalities)
  const output = modalities(filters.output_modalities)
  return entries.filter((entry) => {
    if (category && !entry.view.tags.some((tag) => tag.toLowerCase() === category)) return false
    if (required.length && !required.every((p) => entry.view.supported_parameters.includes(p))) return false
    if (provider && !entry.offers.some((o) => o.provider.slug.toLowerCase() === provider)) return false
    if (input && !hasAny(entry.view.architecture.input_modalities, input)) return false
    if (output && !hasAny(entry.view.architecture.output_modalities, output)) return false
    return true
  })
}

/** The entries some provider of which serves the capability (docs/capabilities.md), in their order: what `/embeddings/models` lists. */
export const entriesServing = (entries: CatalogueEntry[], capability: Capability): CatalogueEntry[] =>
  entries.filter((entry) => entry.offers.some((offer) => offerServes(offer, capability)))
