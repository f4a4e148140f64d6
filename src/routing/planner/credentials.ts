import type { CatalogueEntry, ModelOffer } from '../../catalogue/catalogue'
import type { CredentialRecord } from '../../stores/byok'
import type { Preferences } from './preferences'
import type { Attempt, CallingKey, Candidate, LeftOut, PlanInput } from './types'

/**
 * The customer's credentials (BYOK) that apply to an offer for the calling key (docs/byok.md): for a provider that
 * accepts customers' keys, not disabled, `allowed_models` empty or holding the model, `allowed_api_key_hashes` empty or
 * holding the key's hash, `allowed_user_ids` empty or holding the key's user; in `sort_order`.
 */
export function applicableCredentials(credentials: CredentialRecord[], entry: CatalogueEntry, offer: ModelOffer, key: CallingKey): CredentialRecord[] {
  return credentials.filter(
    (c) =>
      offer.provider.byokSupported &&
      c.provider === offer.provider.slug &&
      !c.disabled &&
      (!c.allowed_models.length || c.allowed_models.includes(entry.id)) &&
      (!c.allowed_api_key_hashes.length || c.allowed_api_key_hashes.includes(key.hash)) &&
      (!c.allowed_user_ids?.length || c.allowed_user_ids.includes(key.user_id)),
  )
}

/** True when an enabled credential of the org says `is_byok_only` for the offer's provider: its service key is never used (docs/byok.md). */
export const byokOnly = (credentials: CredentialRecord[], offer: ModelOffer): boolean =>
  credentials.some((c) => c.is_byok_only && !c.disabled && c.provider === offer.provider.slug)

/** True when some offer of the entries accepts customers' keys: only then are the org's credentials read. */
export const byokPossible = (entries: CatalogueEntry[]): boolean => entries.some((entry) => entry.offers.some((offer) => offer.provider.byokSupported))

/** The attempts of the groups, and the offers left out because they need the customer's own key. */
export interface CredentialedAttempts {
  attempts: Attempt[]
  leftOut: LeftOut[]
}

/** The id a request's own key stands under as a credential (docs/byok.md#keys-for-one-request): in usage records and logs. */
export const REQUEST_CREDENTIAL_ID = 'request'

// The stand-in credential of a request's own key: applies to every model of its provider, tried first, falls back as a
// stored key without `always_use` does; nothing sealed, nothing stored.
const requestCredential = (provider: string): CredentialRecord => ({
  id: REQUEST_CREDENTIAL_ID,
  org_id: '',
  provider,
  name: 'Key of this request',
  label: '',
  sealed_key: '',
  allowed_api_key_hashes: [],
  allowed_models: [],
  always_use: false,
  is_fallback: false,
  disabled: false,
  sort_order: 0,
  created_at: '',
})

/**
 * The attempts of each group in turn (docs/byok.md): the customer's own keys first (whatever `provider.order` says), in
 * `sort_order`; then each provider's service key, unless a credential says `always_use`, any of the org's for that
 * provider says `is_byok_only`, or the service has none; `is_fallback` keys after it. A key the request itself gave for
 * a provider (docs/byok.md#keys-for-one-request) takes the place of the org's stored ones for that provider; their
 * `always_use` and `is_byok_only` still keep the service's key out. A request asking for zero data retention never
 * goes through a key its customer declared not ZDR (`declared_zdr: false`). An offer with neither a service key nor a
 * credential is left out: it needs the customer's own key.
 */
export function withCredentials(groups: Candidate[][], byok: PlanInput['byok'], preferences: Pick<Preferences, 'zdr'>): CredentialedAttempts {
  const credentials = byok?.credentials ?? []
  const stored = (c: Candidate) =>
    byok ? applicableCredentials(credentials, c.entry, c.offer, byok.key).filter((credential) => !(preferences.zdr && credential.declared_zdr === false)) : []
  const requestKey = (c: Candidate) => (c.offer.provider.byokSupported ? byok?.requestKeys?.keyFor(c.offer.provider.slug) : undefined)
  const customers = (c: Candidate): Attempt[] => {
    const key = requestKey(c)
    return key ? [{ ...c, credential: requestCredential(key.provider), requestKey: key }] : stored(c).map((credential) => ({ ...c, credential }))
  }
  const attempts: Attempt[] = []
  const leftOut: LeftOut[] = []
  for (const group of groups) {
    for (const c of group) for (const attempt of customers(c)) if (!attempt.credential!.is_fallback) attempts.push(attempt)
    for (const c of group) {
      if (c.offer.provider.serviceKey !== false && !stored(c).some((credential) => credential.always_use) && !byokOnly(credentials, c.offer))
        attempts.push({ ...c })
      for (const attempt of customers(c)) if (attempt.credential!.is_fallback) attempts.push(attempt)
    }
    for (const c of group) {
      if ((c.offer.provider.serviceKey === false || byokOnly(credentials, c.offer)) && !customers(c).length) {
        leftOut.push({ provider: c.offer.provider.slug, model: c.entry.id, reason: 'needs your own key (BYOK) for this provider' })
      }
    }
  }
  return { attempts, leftOut }
}
