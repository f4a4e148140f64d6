import { CAPABILITIES, offerServes, pathsOf, type Capability } from '../../contracts'
import type { CatalogueEntry } from '../../catalogue/catalogue'
import { invalidRequest } from '../../errors'
import type { RoutingRequest } from './types'

/** The models a request names: its model, then its `models` fallbacks, each once; 400 when it names none. */
export function requestedModels(request: Pick<RoutingRequest, 'model' | 'models'>): string[] {
  const ids = [...new Set([request.model, ...(request.models ?? [])].filter((id): id is string => !!id))]
  if (!ids.length) throw invalidRequest('model: is required', 'model')
  return ids
}

/** True when some offer of the entry serves the capability. */
const serves = (entry: CatalogueEntry, capability: Capability) => entry.offers.some((offer) => offerServes(offer, capability))

/**
 * The entries that serve the request's capability, in the request's order (docs/capabilities.md). A listed model that
 * does not is skipped while another one does; when none does → 400 naming what the first model serves, and which
 * models of the catalogue do.
 */
export function servingEntries(
  request: Pick<RoutingRequest, 'capability' | 'model'>,
  entries: CatalogueEntry[],
  catalogue: () => CatalogueEntry[],
): CatalogueEntry[] {
  const serving = entries.filter((entry) => serves(entry, request.capability))
  if (serving.length) return serving
  const path = CAPABILITIES[request.capability].path
  const first = entries[0]
  const its = [...new Set(first.offers.flatMap((offer) => pathsOf(offer.model)))].join(', ')
  const others = catalogue()
    .filter((e) => serves(e, request.capability))
    .map((e) => e.id)
  const hint = others.length ? `Models that do: ${others.slice(0, 20).join(', ')}${others.length > 20 ? ', …' : ''}.` : 'No model of this gateway does.'
  throw invalidRequest(`model: ${first.id} does not serve ${path} (it serves ${its}). ${hint}`, request.model ? 'model' : 'models')
}
