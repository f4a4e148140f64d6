import * as v from 'valibot'
import { PII_KINDS, type PiiKind } from '../policies/pii'
import { nonNegativeDecimal } from './common'

/** Bounds of the built-in rules (docs/policies.md#built-in-rules): entries of an allowlist, characters of each. */
export const RULE_LIMITS = { models: 1000, model: 256, providers: 64, provider: 128 } as const

const list = (entries: number, chars: number) =>
  v.pipe(v.array(v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(chars))), v.maxLength(entries))

/** `max_price` of a rule: OpenRouter's `provider.max_price` shape (USD per million prompt / completion tokens, per request, per image). */
export const ruleMaxPriceSchema = v.strictObject({
  prompt: v.optional(v.nullable(nonNegativeDecimal)),
  completion: v.optional(v.nullable(nonNegativeDecimal)),
  request: v.optional(v.nullable(nonNegativeDecimal)),
  image: v.optional(v.nullable(nonNegativeDecimal)),
})

/** `redact` of a rule: personal data replaced in what is sent to the provider (`input`) and what is answered (`output`). */
export const redactRuleSchema = v.strictObject({
  input: v.boolean(),
  output: v.boolean(),
  kinds: v.optional(v.pipe(v.array(v.picklist(PII_KINDS as PiiKind[], `must be one of ${PII_KINDS.join(', ')}`)), v.maxLength(PII_KINDS.length))),
})

/**
 * The built-in rules of a key, a user or an org, as set (docs/policies.md#built-in-rules), in OpenRouter's guardrail
 * field names: each absent (unchanged) or null (no such rule) or its value.
 */
export const rulesPatchSchema = v.strictObject({
  allowed_models: v.optional(v.nullable(list(RULE_LIMITS.models, RULE_LIMITS.model))),
  allowed_providers: v.optional(v.nullable(list(RULE_LIMITS.providers, RULE_LIMITS.provider))),
  max_price: v.optional(v.nullable(ruleMaxPriceSchema)),
  enforce_zdr: v.optional(v.nullable(v.boolean())),
  data_collection: v.optional(v.nullable(v.picklist(['allow', 'deny'], 'must be "allow", "deny" or null'))),
  redact: v.optional(v.nullable(redactRuleSchema)),
})

/** A change of rules: each field absent (unchanged), null (removed) or its new value. */
export type RulesPatch = v.InferOutput<typeof rulesPatchSchema>

/** The rules as the key routes show them: each null when not set. */
export const rulesViewSchema = v.object({
  allowed_models: v.nullable(v.array(v.string())),
  allowed_providers: v.nullable(v.array(v.string())),
  max_price: v.nullable(
    v.object({
      prompt: v.optional(v.string()),
      completion: v.optional(v.string()),
      request: v.optional(v.string()),
      image: v.optional(v.string()),
    }),
  ),
  enforce_zdr: v.boolean(),
  data_collection: v.nullable(v.picklist(['allow', 'deny'])),
  redact: v.nullable(v.object({ input: v.boolean(), output: v.boolean(), kinds: v.array(v.string()) })),
})
