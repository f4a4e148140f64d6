// The built-in rules of keys, users and orgs (docs/policies.md#built-in-rules): set through the key routes, the admin
// API and the CLI, stored on the records, and merged for a request's principal, the strictest winning.

import { compare, decimal, decimalString } from '../billing/decimal'
import { GatewayError } from '../errors'
import type { RulesPatch } from '../schemas/rules'
import type { Principal, Rules } from '../stores/account-types'
import { PII_KINDS, type PiiKind } from './pii'

/** Whose rule it is: the request's org, its user, or its key. */
export type RuleOwner = 'org' | 'user' | 'key'

/** The prices of `max_price`, as a request's `provider.max_price` names them. */
export type PriceField = 'prompt' | 'completion' | 'request' | 'image'

const PRICE_FIELDS: PriceField[] = ['prompt', 'completion', 'request', 'image']

/** One owner's allowlist. */
export interface OwnedList {
  owner: RuleOwner
  entries: string[]
}

/** The rules that apply to one request: those of its org, user and key together (docs/policies.md#built-in-rules). */
export interface MergedRules {
  /** Every owner's model allowlist: a model must be in each. */
  allowedModels: OwnedList[]
  /** Every owner's provider allowlist: an offer's provider must be in each. */
  allowedProviders: OwnedList[]
  /** The lowest `max_price` of each field, and whose it is. */
  maxPrice: Partial<Record<PriceField, { value: string; owner: RuleOwner }>>
  /** Who forces zero data retention, if anyone (the first of org, user, key). */
  zdr?: RuleOwner
  /** Who forces `data_collection: "deny"`, if anyone. */
  denyDataCollection?: RuleOwner
  /** Personal data to redact: on input or output if any owner asks, of the kinds any asks (every kind when one names none). */
  redact?: { input: boolean; output: boolean; kinds: PiiKind[] }
}

/** The rules of the org, then the user, then the key, merged: allowlists all apply, the lowest price wins, any ZDR forces it. */
export function mergeRules(owned: [RuleOwner, Rules | undefined][]): MergedRules {
  const merged: MergedRules = { allowedModels: [], allowedProviders: [], maxPrice: {} }
  for (const [owner, rules] of owned) {
    if (!rules) continue
    if (rules.allowed_models) merged.allowedModels.push({ owner, entries: rules.allowed_models })
    if (rules.allowed_providers) merged.allowedProviders.push({ owner, entries: rules.allowed_providers })
    for (const field of PRICE_FIELDS) {
      const value = rules.max_price?.[field]
      const current = merged.maxPrice[field]
      if (value !== undefined && (!current || compare(decimal(value), decimal(current.value)) < 0)) merged.maxPrice[field] = { value, owner }
    }
    if (rules.enforce_zdr && !merged.zdr) merged.zdr = owner
    if (rules.data_collection === 'deny' && !merged.denyDataCollection) merged.denyDataCollection = owner
    if (rules.redact && (rules.redact.input || rules.redact.output)) {
      const kinds = rules.redact.kinds?.length ? rules.redact.kinds : PII_KINDS
      const before = merged.redact
      merged.redact = {
        input: (before?.input ?? false) || rules.redact.input,
        output: (before?.output ?? false) || rules.redact.output,
        kinds: PII_KINDS.filter((kind) => kinds.includes(kind) || before?.kinds.includes(kind)),
      }
    }
  }
  return merged
}

// The org's, the user's and the key's rules, and those of every key above a minted key, merged.
const mergedRulesOf = (principal: Pick<Principal, 'org' | 'user' | 'key'>): MergedRules =>
  mergeRules([
    ['org', principal.org.rules],
    ['user', principal.user.rules],
    ['key', principal.key.rules],
    ...(principal.key.ancestors ?? []).map((above): [RuleOwner, Rules | undefined] => ['key', above.rules]),
  ])

// The merged rules of the key, user and org records a principal was resolved to (the authentication cache shares them
// between requests): merged once per set of records, as routing, the policies and chat's priced options all ask.
const merged = new WeakMap<object, { org: object; user: object; rules: MergedRules }>()

/**
 * The merged rules of a request's principal: its org's, its user's and its key's, and those of every key above a
 * minted key, read afresh with it (docs/policies.md#built-in-rules).
 */
export const rulesFor = (principal: Pick<Principal, 'org' | 'user' | 'key'>): MergedRules => {
  const known = merged.get(principal.key)
  if (known && known.org === principal.org && known.user === principal.user) return known.rules
  const rules = mergedRulesOf(principal)
  merged.set(principal.key, { org: principal.org, user: principal.user, rules })
  return rules
}

/** True when the model id is in the allowlist: by its id, or by a `vendor/*` entry (case does not matter). */
export function modelAllowed(entries: string[], model: string): boolean {
  const id = model.toLowerCase()
  return entries.some((entry) => entry === id || (entry.endsWith('/*') && id.startsWith(entry.slice(0, -1))))
}

const ownerName = (owner: RuleOwner) => (owner === 'key' ? 'API key' : owner)

/**
 * 403 `model_not_allowed` for the first model of the request (its model, then its `models`) outside an allowlist,
 * naming the rule's owner (docs/policies.md#errors).
 */
export function checkModelsAllowed(rules: MergedRules, models: string[], param: (model: string) => string): void {
  for (const model of models) {
    const refusing = rules.allowedModels.find((list) => !modelAllowed(list.entries, model))
    if (!refusing) continue
    throw new GatewayError(403, `Model ${model} is not allowed for this request: it is not in the ${ownerName(refusing.owner)}'s allowed_models`, {
      param: param(model),
      metadata: { reason: 'model_not_allowed', rule: refusing.owner, model },
    })
  }
}

/** The first owner whose provider allowlist leaves the provider out, or undefined when every allowlist has it. */
export const providerRefusedBy = (allowedProviders: OwnedList[], provider: string): RuleOwner | undefined =>
  allowedProviders.find((list) => !list.entries.includes(provider.toLowerCase()))?.owner

/** How a rule's owner is named in a reason: "the org's", "the user's", "the API key's". */
export const ownersRule = (owner: RuleOwner) => `the ${ownerName(owner)}'s`

// A decimal string without trailing zeros after its point ("3.50" → "3.5", "2.0" → "2").
const canonical = (text: string) => (text.includes('.') ? text.replace(/\.?0+$/, '') : text)

const lowerUnique = (list: string[]) => [...new Set(list.map((entry) => entry.toLowerCase()))]

/** The rules after a change (each field absent: unchanged, null: removed), or undefined when none is left. */
export function applyRulesPatch(current: Rules | undefined, patch: RulesPatch): Rules | undefined {
  const next: Rules = { ...current }
  if (patch.allowed_models !== undefined) next.allowed_models = patch.allowed_models === null ? undefined : lowerUnique(patch.allowed_models)
  if (patch.allowed_providers !== undefined) next.allowed_providers = patch.allowed_providers === null ? undefined : lowerUnique(patch.allowed_providers)
  if (patch.max_price !== undefined) {
    const prices: NonNullable<Rules['max_price']> = {}
    for (const field of PRICE_FIELDS) {
      const value = patch.max_price?.[field]
      if (value != null) prices[field] = canonical(decimalString(decimal(value)))
    }
    next.max_price = Object.keys(prices).length ? prices : undefined
  }
  if (patch.enforce_zdr !== undefined) next.enforce_zdr = patch.enforce_zdr === true ? true : undefined
  if (patch.data_collection !== undefined) next.data_collection = patch.data_collection === 'deny' ? 'deny' : undefined
  if (patch.redact !== undefined) {
    const redact = patch.redact
    next.redact = redact ? { input: redact.input, output: redact.output, ...(redact.kinds?.length ? { kinds: [...new Set(redact.kinds)] } : {}) } : undefined
  }
  const kept = Object.fromEntries(Object.entries(next).filter(([, value]) => value !== undefined)) as Rules
  return Object.keys(kept).length ? kept : undefined
}

/** The rules as the key routes show them (docs/keys.md): each field null when not set. */
export function rulesView(rules: Rules | undefined) {
  return {
    allowed_models: rules?.allowed_models ?? null,
    allowed_providers: rules?.allowed_providers ?? null,
    max_price: rules?.max_price ?? null,
    enforce_zdr: rules?.enforce_zdr === true,
    data_collection: rules?.data_collection ?? null,
    redact: rules?.redact ? { input: rules.redact.input, output: rules.redact.output, kinds: rules.redact.kinds ?? [...PII_KINDS] } : null,
  }
}
