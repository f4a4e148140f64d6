import { invalidRequest } from '../../errors'
import { defineHost } from './define'

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
})
