import { openaiCompatible, type Provider } from '../../src/index'

/** 0.000001 USD a prompt token, 0.000002 a completion token. */
export const TEST_PRICING = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }

/**
 * The provider `up` in front of a fake OpenAI at `baseURL` (key `sk-up`): `up/gpt-test` answers, `up/broken` always
 * fails with 500, for tests of what a success, a failure and a fallback from one to the other report.
 */
export function workingAndBrokenProvider(baseURL: string): Provider {
  return openaiCompatible({
    slug: 'up',
    name: 'Up',
    baseURL,
    apiKey: 'sk-up',
    models: [
      { id: 'up/gpt-test', upstreamId: 'gpt-test', pricing: TEST_PRICING },
      { id: 'up/broken', upstreamId: 'fail-500', pricing: TEST_PRICING },
    ],
  })
}
