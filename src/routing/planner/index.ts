import { invalidRequest } from '../../errors'
import { servingEntries } from './capability'
import { withCredentials } from './credentials'
import { eligibleOffers } from './eligibility'
import { readPreferences } from './preferences'
import { rankCandidates } from './ranking'
import { providerRefusedBy } from '../../policies/rules'
import { refusal } from './refusal'
import { groupsByThresholds } from './thresholds'
import type { Attempt, PlanInput } from './types'

/**
 * The ordered attempts of a request (docs/routing.md#the-attempts-of-a-request), from plain data and nothing else, in
 * stages: capability (the models that serve it; 400 when none does) → eligibility (`accept`, `only`, `ignore`,
 * `order` without fallbacks, `require_parameters`, `max_price`, `zdr`, `data_collection`, `quantizations`, each
 * exclusion with its reason) → ranking (`order`, then `sort` or health then price; per model or across them) →
 * thresholds (offers missing `preferred_*` after those that meet them) → credentials (BYOK keys and service keys).
 * Breakers do not filter here: the attempt loop skips those cooling down while another way is left. Throws the
 * refusal (a GatewayError: 400, 404 or 503) when nothing is left.
 */
export function plan(input: PlanInput): Attempt[] {
  const { request, health } = input
  if (!input.entries.length) throw invalidRequest('model: is required', 'model')
  const entries = servingEntries(request, input.entries, input.catalogue)
  const preferences = readPreferences(request.provider, request.parameters, input.rules)
  const eligible = eligibleOffers(request, entries, preferences)
  const ranked = rankCandidates(eligible.offers, preferences, health)
  const groups = groupsByThresholds(ranked, entries, preferences, health)
  const { attempts, leftOut } = withCredentials(groups, input.byok, preferences)
  if (attempts.length) return attempts
  const models = input.entries.map((entry) => entry.id)
  throw refusal(models, request.capability, [...eligible.leftOut, ...leftOut], (provider) => providerRefusedBy(preferences.rules.allowedProviders, provider))
}
