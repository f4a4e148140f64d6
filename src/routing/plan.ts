import type { CatalogueEntry } from '../catalogue/catalogue'
import type { GatewayContext } from '../context'
import { checkModelsAllowed, rulesFor } from '../policies/rules'
import type { Principal } from '../stores/account-types'
import type { HealthTracker } from './health'
import { plan } from './planner'
import { requestedModels, servingEntries } from './planner/capability'
import { applicableCredentials, byokOnly, byokPossible } from './planner/credentials'
import type { Attempt, HealthView, RoutingRequest } from './planner/types'

// What the routes and capabilities import of routing: the attempts, the request, the max_price check (chat's priced fields).
export { priceAboveMax } from './planner/eligibility'
export type { Attempt, RoutingRequest } from './planner/types'

/** The catalogue entries the caller's key can be routed to: some offer has the service's key, or a BYOK credential of the org applies (GET /models/user). */
export async function usableEntries(ctx: GatewayContext, principal: Principal, entries: CatalogueEntry[]): Promise<CatalogueEntry[]> {
  const credentials = byokPossible(entries) ? await ctx.byok.records(principal.org.id) : []
  return entries.filter((entry) =>
    entry.offers.some(
      (offer) =>
        (offer.provider.serviceKey !== false && !byokOnly(credentials, offer)) || applicableCredentials(credentials, entry, offer, principal.key).length > 0,
    ),
  )
}

/** The router's health as one org sees it, for the planner. */
export const healthFor = (health: HealthTracker, org: string | undefined): HealthView => ({
  penalty: (key) => health.penalty(key, org),
  latency: (key) => health.latency(key),
  throughput: (key) => health.throughput(key),
  percentiles: (key, metric) => health.percentiles(key, metric),
})

/**
 * The ordered attempts for a request (docs/routing.md): gathers what the planner (`plan`, src/routing/planner) needs
 * — the request's catalogue entries (404 for a model not there), the router's health for the org, and the org's
 * credentials (read only when a provider of a model that serves the capability accepts customers' keys, and never
 * for a request refused with 400) — and plans.
 */
export async function planAttempts(ctx: GatewayContext, request: RoutingRequest, principal?: Principal): Promise<Attempt[]> {
  const ids = requestedModels(request)
  // The caller's built-in rules (docs/policies.md#built-in-rules): a model outside an allowlist is a 403 before anything is read.
  const rules = principal ? rulesFor(principal) : undefined
  if (rules) checkModelsAllowed(rules, ids, (id) => (request.model === id ? 'model' : 'models'))
  const loading = ctx.catalogue.ready()
  if (loading) await loading
  const entries = ids.map((id) => ctx.catalogue.require(id, request.model === id ? 'model' : 'models'))
  const catalogue = () => ctx.catalogue.entries()
  // The capability stage once before the credentials are read (plan runs it again): a 400 never waits on storage.
  const serving = servingEntries(request, entries, catalogue)
  const byok =
    principal && byokPossible(serving)
      ? { credentials: await ctx.byok.records(principal.org.id), key: principal.key, requestKeys: principal.providerKeys }
      : undefined
  return plan({ request, entries, catalogue, health: healthFor(ctx.health, principal?.org.id), byok, rules })
}
