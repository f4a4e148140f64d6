import { defineCommand } from 'citty'
import type { CatalogueEntry } from '../../catalogue/catalogue'
import { CliError } from '../errors'
import { count, money, perMillion, table } from '../format'
import { configArg, jsonArg, out, outJson, say, withGateway } from '../common'

const perMillionOf = (pricing: { prompt: string; completion: string; currency?: string }) => ({
  prompt: perMillion(pricing.prompt),
  completion: perMillion(pricing.completion),
  currency: pricing.currency ?? 'USD',
})

const toJson = (entry: CatalogueEntry) => ({
  id: entry.id,
  name: entry.view.name,
  context_length: entry.view.context_length,
  pricing_per_million: perMillionOf(entry.view.pricing),
  providers: entry.offers.map((offer) => ({
    slug: offer.provider.slug,
    name: offer.provider.name,
    upstream_id: offer.upstreamId,
    context_length: offer.model.contextLength ?? null,
    pricing_per_million: perMillionOf(offer.model.pricing),
  })),
})

/** `model-gateway models`: the catalogue the configured providers make. */
export const modelsCommand = defineCommand({
  meta: { name: 'models', description: 'List the models of the configured providers, with prices per million tokens and context length' },
  args: {
    provider: { type: 'string', valueHint: 'slug', description: 'Only the models this provider serves' },
    ...jsonArg,
    ...configArg,
  },
  async run({ args }) {
    await withGateway({ command: 'models', config: args.config, noStorage: true }, async (cli) => {
      const { catalogue, options } = cli.gateway.context
      await catalogue.ready()
      if (args.provider && !options.providers.some((p) => p.slug === args.provider)) {
        throw new CliError(`no provider ${args.provider}; configured: ${options.providers.map((p) => p.slug).join(', ') || 'none'}`)
      }
      const entries = catalogue
        .entries()
        .filter((entry) => !args.provider || entry.offers.some((offer) => offer.provider.slug === args.provider))
        .sort((a, b) => a.id.localeCompare(b.id))
      if (args.json) return outJson(entries.map(toJson))
      if (!entries.length) return say.info('No models: the configured providers serve none.')
      out(
        table([
          ['MODEL', 'PROVIDERS', 'INPUT /1M', 'OUTPUT /1M', 'CONTEXT'],
          ...entries.map((entry) => {
            const price = perMillionOf(entry.view.pricing)
            return [
              entry.id,
              entry.offers.map((o) => o.provider.slug).join(','),
              money(price.prompt, price.currency),
              money(price.completion, price.currency),
              count(entry.view.context_length),
            ]
          }),
        ]),
      )
      const several = entries.some((entry) => entry.offers.length > 1)
      say.info(
        `${entries.length} model${entries.length === 1 ? '' : 's'}${several ? '; prices are the cheapest provider’s (--json lists each provider’s)' : ''}.`,
      )
    })
  },
})
