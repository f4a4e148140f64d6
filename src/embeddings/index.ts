import type { GatewayContext } from '../context'
import { serveCapability } from '../pipeline/serve'
import type { RoutingRequest } from '../routing/plan'
import type { EmbeddingsRequest } from '../schemas/embeddings'
import { withDimensions } from './dimensions'
import type { EmbeddingsInput } from './embeddings-input'
import { embeddingItems, maxInputTokens } from './input'
import { maxEmbeddingsCost } from './max-cost'
import { embed } from './run'

/** An embeddings request as routing sees it: its model, fallbacks and provider preferences; `dimensions` is a parameter. */
const embeddingsRouting = (request: EmbeddingsRequest): RoutingRequest => ({
  capability: 'embeddings',
  model: request.model,
  models: request.models,
  provider: request.provider,
  parameters: request.dimensions !== undefined ? ['dimensions'] : [],
})

/**
 * Serves POST /embeddings on the capability pipeline (docs/embeddings.md): checks the inputs (400 naming the one
 * that is wrong), plans the attempts that can give `dimensions`, holds the cost of the inputs' most tokens (402 when
 * it cannot be covered), embeds with the first provider that succeeds (in batches where a provider takes only so many
 * inputs a call), bills what each provider served once and answers OpenAI's list of embeddings (floats, or float32
 * base64).
 */
export async function serveEmbeddings(ctx: GatewayContext, input: EmbeddingsInput): Promise<Response> {
  const { request } = input
  const items = embeddingItems(request.input)
  const maxTokens = maxInputTokens(items)
  return serveCapability(ctx, {
    principal: input.principal,
    routing: embeddingsRouting(request),
    requestId: input.requestId,
    refine: (planned) => withDimensions(planned, request.dimensions),
    maxCost: (attempts) => maxEmbeddingsCost(ctx, attempts, maxTokens),
    run: (attempts, hold) => embed(ctx, input, items, maxTokens, attempts, hold),
  })
}
