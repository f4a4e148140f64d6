import type { ProviderModel } from '../../contracts'

/*
 * OpenAI's image generation models (`/images/generations`, docs/images.md), with their list prices in USD as OpenAI's
 * model pages give them (https://developers.openai.com/api/docs/models/gpt-image-1 and …/gpt-image-1-mini, checked
 * 2026-11-27). Override them with `createGateway({ modelOverrides })` when your contract differs.
 *
 * Pricing units (docs/images.md#billing): `prompt` per text input token, `image_output` per image output token (what
 * the images cost: OpenAI's per-image prices by quality and size are these tokens at this price, e.g. gpt-image-1
 * high 1024x1024 = 4,160 tokens × $40 per 1M ≈ $0.167), `completion` per text output token (none for these models).
 *
 * gpt-image-1 was retired on 2026-10-23 (OpenAI's model page; it recommends GPT-Image-2.5 Sunburst), so its offer is
 * not routed from that day; gpt-image-1-mini is marked deprecated but still served. gpt-image-2's prices ($5 text input,
 * $8 image input, $30 image output per 1M tokens, snapshot gpt-image-2-2026-04-21) are OpenAI's model page as two
 * resellers transcribe it (xairouter.com/en/models/gpt-image-2, console.skytells.ai); OpenAI's own page was not in reach
 * here. GPT-Image-2.5's prices were found nowhere first-hand, so it is not added: give it in `modelOverrides` or a
 * catalogue file. Holds of gpt-image-2 use the token table OpenAI gives for GPT Image 1 (src/images/tokens.ts).
 */

const perMillion = (usd: number) => (usd / 1_000_000).toFixed(12).replace(/0+$/, '').replace(/\.$/, '')
const CHECKED = '2026-11-27'
const images = {
  endpoints: ['/images/generations'],
  inputModalities: ['text'],
  outputModalities: ['image'],
  supportedParameters: ['n', 'size', 'quality', 'background', 'output_format', 'output_compression', 'moderation', 'user'],
} satisfies Partial<ProviderModel>

/** OpenAI's GPT Image models (docs/images.md). */
export const openaiImageModels: ProviderModel[] = [
  {
    id: 'openai/gpt-image-1',
    name: 'OpenAI: GPT Image 1',
    description: 'Image generation. Billed by tokens: $5 per 1M text input, $40 per 1M image output tokens ($0.011 to $0.25 an image by quality and size).',
    pricing: { prompt: perMillion(5), completion: '0', image_output: perMillion(40), currency: 'USD' },
    ...images,
    created: 1745366400,
    detailsUrl: 'https://developers.openai.com/api/docs/models/gpt-image-1',
    expirationDate: '2026-10-23',
    source: {
      url: 'https://developers.openai.com/api/docs/models/gpt-image-1',
      checked: CHECKED,
      note: 'Text input $5, image input $10, image output $40 per 1M tokens; per image low $0.011/$0.016, medium $0.042/$0.063, high $0.167/$0.25 (1024x1024 / other sizes). Retired 2026-10-23.',
    },
  },
  {
    id: 'openai/gpt-image-2',
    name: 'OpenAI: GPT Image 2',
    description:
      'OpenAI’s image generation model of April 2026, with dense text rendering. Billed by tokens: $5 per 1M text input, $30 per 1M image output tokens.',
    pricing: { prompt: perMillion(5), completion: '0', image_output: perMillion(30), currency: 'USD' },
    ...images,
    created: 1776729600,
    detailsUrl: 'https://developers.openai.com/api/docs/models/gpt-image-2',
    source: {
      url: 'https://developers.openai.com/api/docs/models/gpt-image-2',
      checked: CHECKED,
      note: 'Text input $5 (cached $1.25), image input $8 (cached $2), image output $30 per 1M tokens; snapshot gpt-image-2-2026-04-21. As transcribed from OpenAI’s page by xairouter.com and console.skytells.ai; OpenAI’s page itself not read.',
    },
  },
  {
    id: 'openai/gpt-image-1-mini',
    name: 'OpenAI: GPT Image 1 mini',
    description:
      'A cost-efficient GPT Image 1. Billed by tokens: $2 per 1M text input, $8 per 1M image output tokens ($0.005 to $0.052 an image by quality and size).',
    pricing: { prompt: perMillion(2), completion: '0', image_output: perMillion(8), currency: 'USD' },
    ...images,
    created: 1759708800,
    detailsUrl: 'https://developers.openai.com/api/docs/models/gpt-image-1-mini',
    source: {
      url: 'https://developers.openai.com/api/docs/models/gpt-image-1-mini',
      checked: CHECKED,
      note: 'Text input $2, image input $2.50, image output $8 per 1M tokens; per image low $0.005/$0.006, medium $0.011/$0.015, high $0.036/$0.052 (1024x1024 / other sizes). Marked deprecated, still served.',
    },
  },
]
