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

/**
 * The `model` a Messages answer names (docs/messages.md#models): the bare id the client sent (`claude-haiku-4-5`)
 * when the model that served is the one that id named, as Claude Code keeps its thinking blocks only for the model it
 * asked for; else the gateway's id of the model that served.
 */
export function answeredModel(sent: string | undefined, resolved: string | undefined): (served: string) => string {
  if (!sent || sent.includes('/') || !resolved) return (served) => served
  return (served) => (served === resolved ? sent : served)
}
