import type { HostFacts } from './define'

/** Anthropic's `/providers` facts and API root (the Messages API, src/providers/anthropic.ts). */
export const anthropicHost: HostFacts = {
  slug: 'anthropic',
  name: 'Anthropic',
  description: 'Anthropic’s Claude models, through the Messages API.',
  baseURL: 'https://api.anthropic.com',
  headquarters: 'US',
  privacyPolicyUrl: 'https://www.anthropic.com/legal/privacy',
  termsOfServiceUrl: 'https://www.anthropic.com/legal/commercial-terms',
  statusPageUrl: 'https://status.claude.com/',
}

/** Google AI Studio's `/providers` facts and API root (the Gemini API, src/providers/gemini.ts). */
export const geminiHost: HostFacts = {
  slug: 'google-ai-studio',
  name: 'Google AI Studio',
  description: 'Google’s Gemini models through the Gemini API (Google AI Studio).',
  baseURL: 'https://generativelanguage.googleapis.com',
  headquarters: 'US',
  privacyPolicyUrl: 'https://policies.google.com/privacy',
  termsOfServiceUrl: 'https://ai.google.dev/gemini-api/terms',
  statusPageUrl: 'https://aistudio.google.com/status',
}
