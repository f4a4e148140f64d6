import { defineHost } from './define'

/** Fireworks AI: open-weights models in OpenAI's chat format. */
export default defineHost({
  slug: 'fireworks',
  name: 'Fireworks',
  baseURL: 'https://api.fireworks.ai/inference/v1',
  headquarters: 'US',
  privacyPolicyUrl: 'https://fireworks.ai/privacy-policy',
  termsOfServiceUrl: 'https://fireworks.ai/terms-of-service',
})
