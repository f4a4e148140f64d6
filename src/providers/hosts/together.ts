import { defineHost } from './define'

/** Together AI: open-weights models in OpenAI's chat format. */
export default defineHost({
  slug: 'together',
  name: 'Together',
  baseURL: 'https://api.together.xyz/v1',
  headquarters: 'US',
  privacyPolicyUrl: 'https://www.together.ai/privacy',
  termsOfServiceUrl: 'https://www.together.ai/terms-of-service',
})
