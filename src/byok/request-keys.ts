import type { GatewayContext } from '../context'
import { invalidRequest } from '../errors'
import { PROVIDER_KEYS_HEADER, parseProviderKeys, type ProviderKeys } from '../http/provider-keys'

/**
 * A request's own provider keys (docs/byok.md#keys-for-one-request), from its `X-Provider-API-Keys` header: parsed
 * strictly, and each for a provider of this gateway that accepts customers' keys (400 naming the header otherwise, as
 * `POST /byok` refuses such a provider). Undefined when the header is absent or names no provider.
 */
export function requestProviderKeys(ctx: GatewayContext, headers: Headers): ProviderKeys | undefined {
  const keys = parseProviderKeys(headers.get(PROVIDER_KEYS_HEADER))
  if (!keys?.providers.length) return undefined
  for (const slug of keys.providers) {
    const provider = ctx.options.providers.find((p) => p.slug === slug)
    if (!provider)
      throw invalidRequest(`${PROVIDER_KEYS_HEADER}: no provider ${slug} on this gateway (see GET ${ctx.options.basePath}/providers)`, PROVIDER_KEYS_HEADER)
    if (!provider.byokSupported) throw invalidRequest(`${PROVIDER_KEYS_HEADER}: ${slug} does not accept customers' own keys`, PROVIDER_KEYS_HEADER)
  }
  return keys
}
