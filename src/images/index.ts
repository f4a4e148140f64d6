import type { GatewayContext } from '../context'
import { serveCapability } from '../pipeline/serve'
import { generateImages } from './generate'
import type { ImagesInput } from './images-input'
import { maxImagesCost } from './max-cost'
import { maxOutputTokensPerImage } from './tokens'

/**
 * Serves POST /images/generations on the capability pipeline (docs/images.md): plans the offers that generate images
 * (the model, then its `models` fallbacks), holds the most the prompt and `n` images of the quality and size can cost
 * (402 when it cannot be covered), generates with the first provider that succeeds, bills its reported tokens exactly
 * once and answers OpenAI's images response (base64 images) with the gateway's usage.
 */
export async function serveImages(ctx: GatewayContext, input: ImagesInput): Promise<Response> {
  const { request } = input
  const promptBytes = Buffer.byteLength(request.prompt, 'utf8')
  const imageOutput = request.n * maxOutputTokensPerImage(request.quality, request.size)
  return serveCapability(ctx, {
    principal: input.principal,
    routing: { capability: 'images', model: request.model, models: request.models, provider: request.provider, promptTokens: promptBytes },
    requestId: input.requestId,
    maxCost: (attempts) => maxImagesCost(ctx, attempts, { textInput: promptBytes, imageInput: 0, imageOutput, textOutput: 0 }),
    run: (attempts, hold) => generateImages(ctx, input, attempts, hold),
  })
}
