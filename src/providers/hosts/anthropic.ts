import type { Host } from '../../contracts'
import { anthropicModels } from '../models/anthropic-models'

/** Anthropic: its `/providers` facts and API root (the Messages API, src/providers/anthropic.ts), data policy and models. */
export const anthropicHost: Host = {
  slug: 'anthropic',
  name: 'Anthropic',
  description: 'Anthropic’s Claude models, through the Messages API.',
  baseURL: 'https://api.anthropic.com',
  headquarters: 'US',
  privacyPolicyUrl: 'https://www.anthropic.com/legal/privacy',
  termsOfServiceUrl: 'https://www.anthropic.com/legal/commercial-terms',
  statusPageUrl: 'https://status.claude.com/',
  dataPolicy: {
    training: false,
    retains_prompts: true,
    retention_days: 30,
    source: 'https://privacy.anthropic.com/en/articles/7996866-how-long-do-you-store-personal-data',
    checked: '2026-11-26',
    note: 'API inputs and outputs are deleted within 30 days and not used for training, unless agreed otherwise (zero data retention agreement); flagged content may be kept longer.',
  },
  models: anthropicModels,
}
