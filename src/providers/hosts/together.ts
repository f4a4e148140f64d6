import { defineHost } from './define'
import { embeddingModels } from '../models/embedding-models'
import { OPEN_WEIGHTS, price, source } from '../models/entries'

/** Together AI: open-weights models in OpenAI's chat format. */
export default defineHost({
  slug: 'together',
  name: 'Together',
  baseURL: 'https://api.together.xyz/v1',
  headquarters: 'US',
  privacyPolicyUrl: 'https://www.together.ai/privacy',
  termsOfServiceUrl: 'https://www.together.ai/terms-of-service',
  // No data policy: its API terms were not checked; it counts as a host that may train and retain (docs/routing.md).
  models: [
    {
      id: 'meta-llama/llama-3.3-70b-instruct',
      upstreamId: 'meta-llama/Llama-3.3-70B-Instruct-Turbo',
      name: 'Meta: Llama 3.3 70B Instruct',
      contextLength: 131_072,
      maxCompletionTokens: 8_192,
      pricing: price(0.88, 0.88),
      supportedParameters: OPEN_WEIGHTS,
      tags: ['programming', 'roleplay'],
      huggingFaceId: 'meta-llama/Llama-3.3-70B-Instruct',
      created: 1733443200,
      source: source(
        'https://www.together.ai/pricing',
        'Unsettled: whether Together still serves Llama 3.3 70B Turbo serverless could not be confirmed on 2026-11-26 (no current copy of its model list was found); $0.88 / $0.88 per the 2026-11-26 audit.',
      ),
    },
    ...embeddingModels.together,
  ],
})
