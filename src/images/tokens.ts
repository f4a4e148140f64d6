/**
 * Image output tokens of one image of OpenAI's GPT Image models by quality and size, as OpenAI's image generation
 * guide gives them (docs/images.md#billing): what the gateway holds before the call, and what it bills when the
 * upstream reports no usage. `auto` is the dearest the model may pick.
 */
export const OUTPUT_TOKENS_PER_IMAGE: Readonly<Record<'low' | 'medium' | 'high', Readonly<Record<'1024x1024' | '1024x1536' | '1536x1024', number>>>> = {
  low: { '1024x1024': 272, '1024x1536': 408, '1536x1024': 400 },
  medium: { '1024x1024': 1056, '1024x1536': 1584, '1536x1024': 1568 },
  high: { '1024x1024': 4160, '1024x1536': 6240, '1536x1024': 6208 },
}

/** The image output tokens one image of the quality and size may take at most (`auto`: the dearest the model may pick). */
export function maxOutputTokensPerImage(quality: string, size: string): number {
  const qualities = quality in OUTPUT_TOKENS_PER_IMAGE ? [quality as keyof typeof OUTPUT_TOKENS_PER_IMAGE] : (['low', 'medium', 'high'] as const)
  let most = 0
  for (const q of qualities) {
    const sizes = OUTPUT_TOKENS_PER_IMAGE[q]
    const tokens = size in sizes ? [sizes[size as keyof typeof sizes]] : Object.values(sizes)
    for (const t of tokens) if (t > most) most = t
  }
  return most
}
