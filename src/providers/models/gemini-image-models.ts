import type { ProviderModel } from '../../contracts'

/*
 * Google's Gemini image models (images in chat answers, docs/images.md#images-in-chat), with Standard list prices in USD
 * per token. `image_output` prices the image output tokens Google reports, `completion` the text output tokens.
 *
 * - Gemini 3 Pro Image: image output $120 per 1M tokens (Google's pricing page, ai.google.dev/gemini-api/docs/pricing,
 *   as transcribed verbatim on 2026-10-07 by api-evangelist/deepmind); text input $2.00 and text output $12.00 are
 *   Gemini 3 Pro's rates, which Google lists for its image model too (1,120 tokens, $0.134, a 1K or 2K image).
 * - Gemini 2.5 Flash Image: input $0.30, image output $30 per 1M tokens, 1,290 tokens ($0.039) an image up to 1024px
 *   (Google's pricing page as quoted in Google's developer forum, discuss.ai.google.dev/t/101173); text output $2.50
 *   as Gemini 2.5 Flash.
 * Override them with `createGateway({ modelOverrides })` when your contract differs.
 */

const perMillion = (usd: number) => (usd / 1_000_000).toFixed(12).replace(/0+$/, '').replace(/\.$/, '')
const PRICING = 'https://ai.google.dev/gemini-api/docs/pricing'
const CHECKED = '2026-11-27'
const PARAMETERS = ['max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'top_k', 'stop', 'seed', 'modalities']
const images = { inputModalities: ['text', 'image'], outputModalities: ['image', 'text'], supportedParameters: PARAMETERS } satisfies Partial<ProviderModel>

/** The Gemini image models `gemini()` serves by default (docs/images.md#images-in-chat). */
export const geminiImageModels: ProviderModel[] = [
  {
    id: 'google/gemini-3-pro-image-preview',
    upstreamId: 'gemini-3-pro-image-preview',
    name: 'Google: Gemini 3 Pro Image (Preview)',
    description: 'Google’s Gemini 3 Pro image generation and editing model; images come back in the chat answer.',
    contextLength: 65_536,
    maxCompletionTokens: 32_768,
    pricing: { prompt: perMillion(2), completion: perMillion(12), image_output: perMillion(120), currency: 'USD' },
    ...images,
    created: 1763596800,
    releaseDate: '2025-11-20',
    detailsUrl: 'https://ai.google.dev/gemini-api/docs/models#gemini-3-pro-image-preview',
    source: {
      url: PRICING,
      checked: CHECKED,
      note: 'Image output $120.00 per 1M tokens (Google’s page, 2026-10-07 verbatim transcription); input $2.00 and text output $12.00 as Gemini 3 Pro.',
    },
  },
  {
    id: 'google/gemini-2.5-flash-image',
    upstreamId: 'gemini-2.5-flash-image',
    name: 'Google: Gemini 2.5 Flash Image',
    description: 'Google’s fast image generation and editing model (“Nano Banana”); images come back in the chat answer.',
    contextLength: 32_768,
    maxCompletionTokens: 32_768,
    pricing: { prompt: perMillion(0.3), completion: perMillion(2.5), image_output: perMillion(30), currency: 'USD' },
    ...images,
    created: 1759881600,
    releaseDate: '2025-10-08',
    detailsUrl: 'https://ai.google.dev/gemini-api/docs/models#gemini-2.5-flash-image',
    source: {
      url: PRICING,
      checked: CHECKED,
      note: 'Input $0.30, image output $30 per 1M tokens, 1,290 tokens ($0.039) an image up to 1024x1024 (Google’s page as quoted in its developer forum); text output $2.50 as Gemini 2.5 Flash.',
    },
  },
]
