import { defineHost } from './define'

/** Groq: OpenAI's chat format at api.groq.com/openai/v1. */
export default defineHost({
  slug: 'groq',
  name: 'Groq',
  baseURL: 'https://api.groq.com/openai/v1',
  headquarters: 'US',
  privacyPolicyUrl: 'https://groq.com/privacy-policy/',
  termsOfServiceUrl: 'https://groq.com/terms-of-use/',
  statusPageUrl: 'https://groqstatus.com/',
})
