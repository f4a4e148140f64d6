import { timedCheck } from '../providers/checks'
import type { GatewayContext } from '../context'
import { invalidRequest } from '../errors'
import type { Provider, ProviderCheck } from '../contracts'

/** The provider a BYOK credential is for: it must exist here and accept customers' keys (400 otherwise). */
export function byokProvider(ctx: GatewayContext, slug: string): Provider {
  const provider = ctx.options.providers.find((p) => p.slug === slug)
  if (!provider) throw invalidRequest(`provider: no provider ${slug} on this gateway (see GET ${ctx.options.basePath}/providers)`, 'provider')
  if (!provider.byokSupported) throw invalidRequest(`provider: ${slug} does not accept customers' own keys`, 'provider')
  return provider
}

const redact = (text: string, secret: string) => (secret ? text.split(secret).join('[redacted]') : text)

/** Real checks of a key with its provider (its own checks, then a one-token completion); never stores, never bills. */
export async function testCredential(ctx: GatewayContext, provider: Provider, key: string) {
  const timeoutMs = Math.min(ctx.options.upstreamTimeoutMs, 15_000)
  const options = () => ({ signal: AbortSignal.timeout(timeoutMs), timeoutMs, apiKey: key })
  const checks: ProviderCheck[] = provider.check ? await provider.check(options()) : []
  await ctx.catalogue.ready()
  const model = ctx.catalogue
    .entries()
    .flatMap((e) => e.offers)
    .filter((o) => o.provider.slug === provider.slug)
    .sort((a, b) => Number(a.model.pricing.prompt) - Number(b.model.pricing.prompt))[0]
  if (model) {
    checks.push(
      await timedCheck(`POST /chat/completions (${model.model.id}, 1 token)`, async () => {
        await provider.chat({ model: model.upstreamId, messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 }, options())
        return 'a one-token completion succeeded'
      }),
    )
  }
  const safe = checks.map((c) => ({ ...c, message: redact(c.message, key) }))
  return { provider: provider.slug, success: safe.length > 0 && safe.every((c) => c.ok), checks: safe }
}
