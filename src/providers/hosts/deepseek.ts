import { defineHost } from './define'
import { CHAT, price, source } from '../models/entries'

// Left out: DeepSeek's current model (deepseek-flash, V4.1-Flash), which DeepSeek prices in yuan with off-peak and peak
// rates by time of day; the gateway bills one price per token in one currency and cannot bill it honestly. DeepSeek
// retired `deepseek-chat` and `deepseek-reasoner` on 2026-07-24, so the deepseek preset serves no model.
/** DeepSeek's open platform, in OpenAI's chat format. */
export default defineHost({
  slug: 'deepseek',
  name: 'DeepSeek',
  baseURL: 'https://api.deepseek.com/v1',
  headquarters: 'CN',
  privacyPolicyUrl: 'https://cdn.deepseek.com/policies/en-US/deepseek-privacy-policy.html',
  termsOfServiceUrl: 'https://cdn.deepseek.com/policies/en-US/deepseek-terms-of-use.html',
  dataPolicy: {
    training: true,
    retains_prompts: true,
    source: 'https://cdn.deepseek.com/policies/en-US/deepseek-privacy-policy.html',
    checked: '2026-11-26',
    note: 'The privacy policy lists training and improving its models among the uses of inputs, and the open platform terms do not exclude API use; no retention period is given.',
  },
  models: [
    {
      id: 'deepseek/deepseek-chat',
      upstreamId: 'deepseek-chat',
      name: 'DeepSeek: DeepSeek V3',
      contextLength: 65_536,
      maxCompletionTokens: 8_192,
      pricing: price(0.27, 1.1, 0.07),
      supportedParameters: CHAT,
      tags: ['programming', 'finance'],
      huggingFaceId: 'deepseek-ai/DeepSeek-V3',
      created: 1735257600,
      expirationDate: '2026-07-24',
      source: source(
        'https://api-docs.deepseek.com/quick_start/pricing',
        'DeepSeek retired the name deepseek-chat on 2026-07-24 (calls fail), per the 2026-11-26 audit; DeepSeek’s page was not re-read. No replacement: its current model (deepseek-flash) is priced in yuan by time of day and left out; no other provider here serves DeepSeek.',
      ),
    },
    {
      id: 'deepseek/deepseek-r1',
      upstreamId: 'deepseek-reasoner',
      name: 'DeepSeek: R1',
      contextLength: 65_536,
      maxCompletionTokens: 32_768,
      pricing: price(0.55, 2.19, 0.14),
      supportedParameters: ['max_tokens', 'reasoning', 'include_reasoning'],
      reasoning: { mandatory: true },
      tags: ['science', 'academia'],
      huggingFaceId: 'deepseek-ai/DeepSeek-R1',
      created: 1737331200,
      expirationDate: '2026-07-24',
      source: source(
        'https://api-docs.deepseek.com/quick_start/pricing',
        'DeepSeek retired the name deepseek-reasoner on 2026-07-24, per the 2026-11-26 audit. No replacement here (OpenRouter still serves the original R1 at $0.70 / $2.50 through other hosts, none of them in this catalogue).',
      ),
    },
  ],
})
