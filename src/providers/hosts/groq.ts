import { defineHost } from './define'
import { CHAT, price, source } from '../models/entries'

/** Groq: OpenAI's chat format at api.groq.com/openai/v1. */
export default defineHost({
  slug: 'groq',
  name: 'Groq',
  baseURL: 'https://api.groq.com/openai/v1',
  headquarters: 'US',
  privacyPolicyUrl: 'https://groq.com/privacy-policy/',
  termsOfServiceUrl: 'https://groq.com/terms-of-use/',
  statusPageUrl: 'https://groqstatus.com/',
  dataPolicy: {
    training: false,
    retains_prompts: true,
    retention_days: 30,
    source: 'https://console.groq.com/docs/your-data',
    checked: '2026-11-26',
    note: "Inference requests are not retained by default, but may be logged up to 30 days to troubleshoot or investigate abuse unless zero data retention is enabled in the account's Data Controls.",
  },
  models: [
    {
      id: 'meta-llama/llama-3.3-70b-instruct',
      upstreamId: 'llama-3.3-70b-versatile',
      name: 'Meta: Llama 3.3 70B Instruct',
      contextLength: 131_072,
      maxCompletionTokens: 32_768,
      pricing: price(0.59, 0.79),
      supportedParameters: CHAT,
      tags: ['programming', 'roleplay'],
      huggingFaceId: 'meta-llama/Llama-3.3-70B-Instruct',
      created: 1733443200,
      expirationDate: '2026-08-16',
      source: source(
        'https://github.com/papi-ai/groq/releases/tag/v0.15.2',
        'Groq decommissioned llama-3.3-70b-versatile on 2026-08-16 (its client’s release notes and codedaily04/commit-craft#1 quoting Groq; Groq recommends gpt-oss-120b or qwen3.6-27b, not in this catalogue). The model stays served by Together and Fireworks. Prices per the 2026-11-26 audit.',
      ),
    },
    {
      id: 'meta-llama/llama-3.1-8b-instruct',
      upstreamId: 'llama-3.1-8b-instant',
      name: 'Meta: Llama 3.1 8B Instruct',
      contextLength: 131_072,
      maxCompletionTokens: 131_072,
      pricing: price(0.05, 0.08),
      supportedParameters: CHAT,
      tags: ['trivia'],
      huggingFaceId: 'meta-llama/Llama-3.1-8B-Instruct',
      created: 1721692800,
      expirationDate: '2026-08-16',
      source: source(
        'https://github.com/papi-ai/groq/releases/tag/v0.15.2',
        'Groq decommissioned llama-3.1-8b-instant on 2026-08-16; no other provider in this catalogue serves the 8B, so it is retired here, with no replacement in this catalogue. Prices per the 2026-11-26 audit.',
      ),
    },
  ],
})
