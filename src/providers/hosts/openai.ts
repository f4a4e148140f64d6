import { openaiAudioModels } from '../models/audio-models'
import { embeddingModels } from '../models/embedding-models'
import { openaiImageModels } from '../models/image-models'
import { openaiChatModels } from '../models/openai-models'
import { defineHost } from './define'

// OpenAI answers 400 "Unrecognized request argument" to top_k, repetition_penalty, min_p and OpenRouter's
// include_reasoning; it answers up to 128 choices (`n`), billed in one usage report.
export default defineHost({
  slug: 'openai',
  name: 'OpenAI',
  description: 'OpenAI’s GPT and o-series models.',
  baseURL: 'https://api.openai.com/v1',
  headquarters: 'US',
  privacyPolicyUrl: 'https://openai.com/policies/privacy-policy/',
  termsOfServiceUrl: 'https://openai.com/policies/row-terms-of-use/',
  statusPageUrl: 'https://status.openai.com/',
  dropParameters: ['top_k', 'repetition_penalty', 'min_p', 'include_reasoning'],
  maxChoices: 128,
  dataPolicy: {
    training: false,
    retains_prompts: true,
    retention_days: 30,
    source: 'https://platform.openai.com/docs/guides/your-data',
    checked: '2026-11-26',
    note: "API data is not used for training unless the organisation opts in; abuse monitoring logs are kept up to 30 days. Zero data retention needs OpenAI's approval.",
  },
  models: [...openaiChatModels, ...openaiAudioModels, ...embeddingModels.openai, ...openaiImageModels],
})
