import { openaiCompatible } from '../../src/providers/openai-compatible'
import type { ModelPricing, Provider } from '../../src/contracts'

/** The provider without its native APIs (docs/native.md): a `/responses` or `/messages` request to it is served through the chat translation. */
export const withoutNative = (provider: Provider): Provider => ({ ...provider, native: undefined })

/** The OpenAI-compatible provider `up` (key `sk-up`) in front of a fake upstream, serving `fake/gpt-test` (its `gpt-test`) at `pricing`. */
export const fakeUpProvider = (upstream: { url: string }, pricing: ModelPricing): Provider =>
  openaiCompatible({ slug: 'up', name: 'Up', baseURL: upstream.url, apiKey: 'sk-up', models: [{ id: 'fake/gpt-test', upstreamId: 'gpt-test', pricing }] })
