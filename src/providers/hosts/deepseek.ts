import { defineHost } from './define'

/** DeepSeek's open platform, in OpenAI's chat format. */
export default defineHost({
  slug: 'deepseek',
  name: 'DeepSeek',
  baseURL: 'https://api.deepseek.com/v1',
  headquarters: 'CN',
  privacyPolicyUrl: 'https://cdn.deepseek.com/policies/en-US/deepseek-privacy-policy.html',
  termsOfServiceUrl: 'https://cdn.deepseek.com/policies/en-US/deepseek-terms-of-use.html',
})
