/**
 * An image generation request as a provider receives it (OpenAI's Images API, `POST /images/generations`; docs/images.md):
 * the provider's model id, the fields the gateway checked; images always come back as base64 (`b64_json`).
 */
export interface UpstreamImageRequest {
  model: string
  prompt: string
  n: number
  size?: string
  quality?: string
  background?: string
  output_format?: string
  output_compression?: number
  moderation?: string
  user?: string
}

/** Token usage of an image generation as OpenAI's GPT Image models report it. */
export interface ImageUsage {
  input_tokens?: number
  output_tokens?: number
  total_tokens?: number
  input_tokens_details?: { text_tokens?: number; image_tokens?: number; [key: string]: unknown } | null
  output_tokens_details?: { text_tokens?: number; image_tokens?: number; [key: string]: unknown } | null
  [key: string]: unknown
}

/** One generated image. */
export interface UpstreamImage {
  b64_json?: string
  url?: string
  revised_prompt?: string
  [key: string]: unknown
}

/** An image generation answer as OpenAI shapes it. */
export interface UpstreamImages {
  created?: number
  data: UpstreamImage[]
  usage?: ImageUsage | null
  background?: string
  output_format?: string
  quality?: string
  size?: string
  /** The provider's id of the request, when it gives one (OpenAI's `x-request-id`). */
  id?: string
  [key: string]: unknown
}
