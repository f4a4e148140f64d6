import type { Host } from '../../contracts'
import { geminiModels } from '../models/gemini-models'

/** Google AI Studio: its `/providers` facts and API root (the Gemini API, src/providers/gemini.ts), data policy and models. */
export const geminiHost: Host = {
  slug: 'google-ai-studio',
  name: 'Google AI Studio',
  description: 'Google’s Gemini models through the Gemini API (Google AI Studio).',
  baseURL: 'https://generativelanguage.googleapis.com',
  headquarters: 'US',
  privacyPolicyUrl: 'https://policies.google.com/privacy',
  termsOfServiceUrl: 'https://ai.google.dev/gemini-api/terms',
  statusPageUrl: 'https://aistudio.google.com/status',
  dataPolicy: {
    training: true,
    retains_prompts: true,
    retention_days: 55,
    source: 'https://ai.google.dev/gemini-api/terms',
    checked: '2026-11-26',
    note: "Unpaid Services (free quota, no Cloud Billing) are used to improve Google's products and may be read by reviewers; a project with Cloud Billing is a Paid Service whose prompts are not used for training. Prompts and outputs are kept 55 days for abuse monitoring (https://ai.google.dev/gemini-api/docs/usage-policies).",
  },
  models: geminiModels,
}
