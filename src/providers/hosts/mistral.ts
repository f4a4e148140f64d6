import { invalidRequest } from '../../errors'
import { defineHost } from './define'
import { embeddingModels } from '../models/embedding-models'
import { CHAT, epoch, price, source } from '../models/entries'

// Mistral's chat API (docs/providers.md#mistral): the seed is `random_seed`, `safe_prompt` (a boolean) passes through,
// `max_completion_tokens` is its `max_tokens`, no `stream_options` (usage comes in the last chunk anyway); it takes
// `n`. OpenAI-only fields it does not list are dropped. Its embeddings take `output_dimension`, and no `user`.
export default defineHost({
  slug: 'mistral',
  name: 'Mistral',
  baseURL: 'https://api.mistral.ai/v1',
  headquarters: 'FR',
  privacyPolicyUrl: 'https://mistral.ai/terms/#privacy-policy',
  termsOfServiceUrl: 'https://mistral.ai/terms/',
  dropParameters: ['logit_bias', 'logprobs', 'top_logprobs', 'user', 'service_tier', 'store', 'top_k', 'repetition_penalty', 'min_p'],
  chatBody(body) {
    const { seed, max_completion_tokens, stream_options: _usage, ...rest } = body
    if (rest.safe_prompt !== undefined && typeof rest.safe_prompt !== 'boolean') throw invalidRequest('safe_prompt: expected a boolean', 'safe_prompt')
    if (seed !== undefined && rest.random_seed === undefined) rest.random_seed = seed
    if (max_completion_tokens !== undefined && rest.max_tokens === undefined) rest.max_tokens = max_completion_tokens
    return rest
  },
  embedBody: ({ dimensions, user: _user, ...rest }) => (dimensions === undefined ? rest : { ...rest, output_dimension: dimensions }),
  // No data policy: its API terms were not checked; it counts as a host that may train and retain (docs/routing.md).
  models: [
    {
      id: 'mistralai/mistral-large-2512',
      upstreamId: 'mistral-large-2512',
      name: 'Mistral: Mistral Large 3 2512',
      description: 'Mistral’s open-weight (Apache 2.0) mixture-of-experts flagship, 41B active / 675B total parameters.',
      contextLength: 262_144,
      pricing: price(0.5, 1.5),
      inputModalities: ['text', 'image'],
      supportedParameters: CHAT,
      tags: ['legal', 'translation'],
      huggingFaceId: 'mistralai/Mistral-Large-3-675B-Instruct-2512',
      created: epoch('2025-12-02'),
      releaseDate: '2025-12-02',
      source: source(
        'https://openrouter.ai/mistralai/mistral-large-2512',
        '$0.50 / $1.50 per M, 262K context (OpenRouter’s page, read in a copy); hokai.io and frankx.ai give the same prices, 256K context, released 2025-12-02.',
      ),
    },
    {
      id: 'mistralai/mistral-large',
      upstreamId: 'mistral-large-latest',
      name: 'Mistral: Mistral Large (latest)',
      description: 'Mistral’s alias for its current Large model, now Mistral Large 3 (mistral-large-2512).',
      contextLength: 262_144,
      pricing: price(0.5, 1.5),
      inputModalities: ['text', 'image'],
      supportedParameters: CHAT,
      tags: ['legal', 'translation'],
      created: epoch('2025-12-02'),
      releaseDate: '2025-12-02',
      source: source(
        'https://openrouter.ai/mistralai/mistral-large-2512',
        'mistral-large-latest points to Mistral Large 3 (per the 2026-11-26 audit), so it is priced as mistral-large-2512: $0.50 / $1.50 per M, 262K context.',
      ),
    },
    {
      id: 'mistralai/mistral-small-2603',
      upstreamId: 'mistral-small-2603',
      name: 'Mistral: Mistral Small 4',
      description: 'Mistral Small 4, unifying reasoning, vision and coding in one open-weight model.',
      contextLength: 262_144,
      pricing: price(0.15, 0.6),
      inputModalities: ['text', 'image'],
      supportedParameters: CHAT,
      tags: ['translation', 'marketing'],
      created: epoch('2026-03-16'),
      releaseDate: '2026-03-16',
      knowledgeCutoff: '2025-06',
      source: source(
        'https://switchy.build/models/mistral-small-2603',
        '$0.15 / $0.60 per M and 262,144 context as OpenRouter lists it (switchy.build, picksbymodel.com); models.dev (via whichllm.io) gives the same prices, 256K context, released 2026-03-16, cutoff 2025-06.',
      ),
    },
    {
      id: 'mistralai/mistral-small',
      upstreamId: 'mistral-small-latest',
      name: 'Mistral: Mistral Small (latest)',
      description: 'Mistral’s alias for its current Small model, now Mistral Small 4 (mistral-small-2603).',
      contextLength: 262_144,
      pricing: price(0.15, 0.6),
      inputModalities: ['text', 'image'],
      supportedParameters: CHAT,
      tags: ['translation', 'marketing'],
      created: epoch('2026-03-16'),
      releaseDate: '2026-03-16',
      source: source(
        'https://switchy.build/models/mistral-small-2603',
        'mistral-small-latest points to Mistral Small 4 (per the 2026-11-26 audit), so it is priced as mistral-small-2603: $0.15 / $0.60 per M, 262,144 context.',
      ),
    },
    ...embeddingModels.mistral,
  ],
})
