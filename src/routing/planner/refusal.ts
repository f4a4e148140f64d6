import { CAPABILITIES, type Capability } from '../../contracts'
import { GatewayError } from '../../errors'
import type { RuleOwner } from '../../policies/rules'
import type { Exclusion, LeftOut } from './types'

/**
 * Why a request has no attempt (docs/routing.md "Nothing left"): 404 naming which preference excluded which provider
 * when only the request's own preferences left offers out; 503 naming why when one was left out for another reason
 * (a provider that needs the customer's own key, an offer that cannot take the request).
 */
export function refusal(
  models: string[],
  capability: Capability,
  leftOut: LeftOut[],
  providerRule?: (provider: string) => RuleOwner | undefined,
): GatewayError {
  const reasons = leftOut.map((o) => `${o.provider} (${o.model}): ${o.reason}`)
  // Every offer left out by a provider allowlist of the caller's rules: 403 naming the first one's owner (docs/policies.md#errors).
  if (leftOut.length && leftOut.every((o) => o.preference === 'allowed_providers')) {
    const rule = providerRule?.(leftOut[0].provider) ?? 'key'
    return new GatewayError(403, `No provider of ${models.join(', ')} is allowed for this request: ${reasons.join('; ')}`, {
      metadata: { reason: 'provider_not_allowed', rule, models, reasons },
    })
  }
  const excluded = leftOut.flatMap((o): Exclusion[] =>
    o.preference === undefined ? [] : [{ provider: o.provider, model: o.model, preference: o.preference, reason: o.reason }],
  )
  if (excluded.length && excluded.length === leftOut.length) {
    return new GatewayError(404, `No provider of ${models.join(', ')} matches the request's provider preferences: ${reasons.join('; ')}`, {
      param: 'provider',
      metadata: { models, reasons, excluded },
    })
  }
  const on = capability === 'chat' ? '' : ` on ${CAPABILITIES[capability].path}`
  return new GatewayError(503, `No provider is available for ${models.join(', ')}${on}: ${reasons.join('; ')}`, { metadata: { models, reasons } })
}
