import { defineHost } from './define'
import { CHAT, price, source } from '../models/entries'

/** xAI's Grok models, in OpenAI's chat format. */
export default defineHost({
  slug: 'xai',
  name: 'xAI',
  baseURL: 'https://api.x.ai/v1',
  headquarters: 'US',
  privacyPolicyUrl: 'https://x.ai/legal/privacy-policy',
  termsOfServiceUrl: 'https://x.ai/legal/terms-of-service',
  // No data policy: its API terms were not checked; it counts as a host that may train and retain (docs/routing.md).
  models: [
    {
      id: 'x-ai/grok-3-mini',
      upstreamId: 'grok-3-mini',
      name: 'xAI: Grok 3 Mini',
      contextLength: 131_072,
      pricing: price(0.3, 0.5, 0.075),
      supportedParameters: [...CHAT, 'reasoning', 'logprobs', 'top_logprobs'],
      reasoning: { efforts: ['low', 'high'] },
      tags: ['science', 'trivia'],
      created: 1744156800,
      expirationDate: '2026-02-28',
      source: source(
        'https://docs.x.ai/docs/models',
        'Deprecated on 2026-02-28 per the 2026-11-26 audit (xAI’s page was not found in a copy). No replacement added: xAI points its retired models to grok-4.3 ($1.25 / $2.50, higher above 204,800 prompt tokens, per apidog.com), which is not a small model and whose length-tiered price a flat price cannot bill.',
      ),
    },
  ],
})
