import { defineHost } from './define'
import { OPEN_WEIGHTS, price, source } from '../models/entries'

/** Fireworks AI: open-weights models in OpenAI's chat format. */
export default defineHost({
  slug: 'fireworks',
  name: 'Fireworks',
  baseURL: 'https://api.fireworks.ai/inference/v1',
  headquarters: 'US',
  privacyPolicyUrl: 'https://fireworks.ai/privacy-policy',
  termsOfServiceUrl: 'https://fireworks.ai/terms-of-service',
  dataPolicy: {
    training: false,
    retains_prompts: false,
    source: 'https://docs.fireworks.ai/guides/security_compliance/data_handling',
    checked: '2026-11-26',
    note: "Zero data retention by default for open models; Fireworks' own proprietary models may log prompts, and the Responses API stores conversations 30 days unless store=false.",
  },
  models: [
    {
      id: 'meta-llama/llama-3.3-70b-instruct',
      upstreamId: 'accounts/fireworks/models/llama-v3p3-70b-instruct',
      name: 'Meta: Llama 3.3 70B Instruct',
      contextLength: 131_072,
      maxCompletionTokens: 16_384,
      pricing: price(0.9, 0.9),
      supportedParameters: OPEN_WEIGHTS,
      tags: ['programming', 'roleplay'],
      huggingFaceId: 'meta-llama/Llama-3.3-70B-Instruct',
      created: 1733443200,
      source: source(
        'https://www.lava.so/docs/gateway/providers/fireworks',
        'Unsettled: Lava’s (undated) list of Fireworks models still shows llama-v3p3-70b-instruct at $0.90 / $0.90, but Fireworks’ own serverless list was not found, so whether it is still served is not confirmed.',
      ),
    },
  ],
})
