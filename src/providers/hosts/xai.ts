import { defineHost } from './define'

/** xAI's Grok models, in OpenAI's chat format. */
export default defineHost({
  slug: 'xai',
  name: 'xAI',
  baseURL: 'https://api.x.ai/v1',
  headquarters: 'US',
  privacyPolicyUrl: 'https://x.ai/legal/privacy-policy',
  termsOfServiceUrl: 'https://x.ai/legal/terms-of-service',
})
