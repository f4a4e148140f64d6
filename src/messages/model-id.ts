import type { GatewayContext } from '../context'

/**
 * The gateway's id of a model a Messages client names the way Anthropic does (docs/messages.md#models): an id with
 * an author (`anthropic/claude-sonnet-4.5`) is kept; a bare one (`claude-sonnet-4-5`, what Claude Code sends) is
 * `anthropic/<id>` when the catalogue has it, else the model whose Anthropic offer has that upstream id, else kept
 * as it is (and answered 404 naming it).
 */
export async function gatewayModelId(ctx: GatewayContext, model: string): Promise<string> {
  if (model.includes('/')) return model
  await ctx.catalogue.ready()
  if (ctx.catalogue.get(`anthropic/${model}`)) return `anthropic/${model}`
  const served = ctx.catalogue.entries().find((entry) => entry.offers.some((offer) => offer.provider.slug === 'anthropic' && offer.upstreamId === model))
  return served?.id ?? model
}
