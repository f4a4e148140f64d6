import type { Hold } from '../billing/holds'
import type { GatewayContext } from '../context'
import type { UpstreamImageRequest, UpstreamImages } from '../contracts'
import { newGenerationId } from '../generation/id'
import { stringifyExact } from '../http/exact-json'
import { gatewayResponse } from '../http/respond'
import { upstreamError } from '../providers/upstream-error'
import { firstSuccessful } from '../routing/attempts'
import type { Attempt } from '../routing/plan'
import type { ImagesRequest } from '../schemas/images'
import { settleImages } from './billing'
import type { ImagesInput } from './images-input'
import { hasImageTokens, tokensOfUsage, type ImageTokens } from './pricing'
import { maxOutputTokensPerImage } from './tokens'
import { imagesUsageView } from './usage-view'

/** The request as the attempt's provider receives it: its model id and the fields the client gave (images come as base64). */
function upstreamRequestFor(request: ImagesRequest, attempt: Attempt): UpstreamImageRequest {
  return {
    model: attempt.offer.upstreamId,
    prompt: request.prompt,
    n: request.n,
    ...(request.size !== 'auto' ? { size: request.size } : {}),
    ...(request.quality !== 'auto' ? { quality: request.quality } : {}),
    ...(request.background !== undefined ? { background: request.background } : {}),
    ...(request.output_format !== undefined ? { output_format: request.output_format } : {}),
    ...(request.output_compression !== undefined ? { output_compression: request.output_compression } : {}),
    ...(request.moderation !== undefined ? { moderation: request.moderation } : {}),
    ...(request.user !== undefined ? { user: request.user } : {}),
  }
}

/**
 * The tokens billed when the upstream reported none (docs/images.md#billing): the prompt's UTF-8 bytes / 4 as text
 * input, and per image returned the output tokens of the quality and size the answer names (else the request's; `auto`:
 * the most the model may take).
 */
function estimatedTokens(request: ImagesRequest, images: UpstreamImages): ImageTokens {
  const perImage = maxOutputTokensPerImage(images.quality ?? request.quality, images.size ?? request.size)
  return { textInput: Math.ceil(Buffer.byteLength(request.prompt, 'utf8') / 4), imageInput: 0, imageOutput: perImage * images.data.length, textOutput: 0 }
}

/**
 * Generates the images with the first provider that succeeds (retries, health, fallbacks: firstSuccessful), bills it
 * once (the hold is replaced by the charge) and answers OpenAI's images response with the gateway's usage.
 */
export async function generateImages(ctx: GatewayContext, input: ImagesInput, attempts: Attempt[], hold: Hold): Promise<Response> {
  const { request, principal } = input
  const startedAt = ctx.now()
  const { result, attempt, tries } = await firstSuccessful(ctx, attempts, { ...input, org: principal.org.id }, async (a, options) => {
    const images = await a.offer.provider.generateImages!(upstreamRequestFor(request, a), options)
    if (!Array.isArray(images?.data) || images.data.length === 0 || images.data.some((image) => typeof image?.b64_json !== 'string' || !image.b64_json))
      throw upstreamError(a.offer.provider, 'malformed_response', 'the answer held no base64 images')
    return images
  })
  const generationId = newGenerationId(startedAt)
  const reported = hasImageTokens(result.usage) ? result.usage : undefined
  const billed = await settleImages(ctx, {
    principal,
    attempt,
    tokens: reported ? tokensOfUsage(reported) : estimatedTokens(request, result),
    estimated: !reported,
    images: result.data.length,
    generationId,
    upstreamId: typeof result.id === 'string' ? result.id : null,
    stream: false,
    status: 'success',
    startedAt,
    attempts: tries,
    hold,
    tags: input.tags,
  })
  const body = {
    id: generationId,
    created: typeof result.created === 'number' ? result.created : Math.floor(startedAt / 1000),
    data: result.data.map((image) => ({
      b64_json: image.b64_json,
      ...(typeof image.revised_prompt === 'string' ? { revised_prompt: image.revised_prompt } : {}),
    })),
    ...(typeof result.background === 'string' ? { background: result.background } : {}),
    ...(typeof result.output_format === 'string' ? { output_format: result.output_format } : {}),
    ...(typeof result.quality === 'string' ? { quality: result.quality } : {}),
    ...(typeof result.size === 'string' ? { size: result.size } : {}),
    model: attempt.entry.id,
    provider: attempt.offer.provider.name,
    usage: imagesUsageView(billed, result.data.length),
  }
  const headers = { 'content-type': 'application/json; charset=utf-8', 'x-generation-id': generationId }
  return gatewayResponse(stringifyExact(body), 200, headers, input.requestId)
}
