import type { ProviderModel } from '../providers/types'
import { anthropicModels } from './anthropic-models'
import { geminiModels } from './gemini-models'
import { openaiAudioModels } from './audio-models'

/*
 * Well-known models per provider, with published list prices (USD per token) and context lengths.
 * Source: each provider's public pricing and model pages (OpenAI platform docs, Groq, Together AI, Fireworks AI,
 * Mistral AI, DeepSeek, xAI), as published in 2025; this file was written on 2026-11-25 on a machine without web
 * access, so check the live pages before charging real money, and override prices in `createGateway({ models })`.
 */

const perMillion = (usd: number) => (usd / 1_000_000).toFixed(12).replace(/0+$/, '').replace(/\.$/, '')
const price = (input: number, output: number, cachedInput?: number): ProviderModel['pricing'] => ({
  prompt: perMillion(input),
  completion: perMillion(output),
  ...(cachedInput === undefined ? {} : { input_cache_read: perMillion(cachedInput) }),
  currency: 'USD',
})

const CHAT = ['max_tokens', 'temperature', 'top_p', 'stop', 'seed', 'frequency_penalty', 'presence_penalty', 'response_format', 'tools', 'tool_choice']
const OPENAI_CHAT = [...CHAT, 'max_completion_tokens', 'logprobs', 'top_logprobs', 'logit_bias', 'parallel_tool_calls', 'structured_outputs', 'user']
const OPENAI_REASONING = ['max_tokens', 'max_completion_tokens', 'seed', 'response_format', 'tools', 'tool_choice', 'parallel_tool_calls', 'structured_outputs', 'reasoning', 'include_reasoning', 'user']
const OPEN_WEIGHTS = [...CHAT, 'top_k', 'repetition_penalty', 'min_p', 'logprobs', 'top_logprobs']
const EFFORTS = ['minimal', 'low', 'medium', 'high']
const docs = (model: string) => `https://platform.openai.com/docs/models/${model}`

/** Models per provider slug. */
export const knownModels: Record<string, ProviderModel[]> = {
  openai: [
    { id: 'openai/gpt-5', name: 'OpenAI: GPT-5', contextLength: 400_000, maxCompletionTokens: 128_000, pricing: price(1.25, 10, 0.125), inputModalities: ['text', 'image', 'file'], supportedParameters: OPENAI_REASONING, reasoning: { efforts: EFFORTS }, tags: ['programming', 'science', 'academia'], created: 1754524800, knowledgeCutoff: '2024-09-30', detailsUrl: docs('gpt-5') },
    { id: 'openai/gpt-5-mini', name: 'OpenAI: GPT-5 mini', contextLength: 400_000, maxCompletionTokens: 128_000, pricing: price(0.25, 2, 0.025), inputModalities: ['text', 'image', 'file'], supportedParameters: OPENAI_REASONING, reasoning: { efforts: EFFORTS }, tags: ['programming'], created: 1754524800, knowledgeCutoff: '2024-05-31', detailsUrl: docs('gpt-5-mini') },
    { id: 'openai/gpt-5-nano', name: 'OpenAI: GPT-5 nano', contextLength: 400_000, maxCompletionTokens: 128_000, pricing: price(0.05, 0.4, 0.005), inputModalities: ['text', 'image', 'file'], supportedParameters: OPENAI_REASONING, reasoning: { efforts: EFFORTS }, tags: ['technology'], created: 1754524800, knowledgeCutoff: '2024-05-31', detailsUrl: docs('gpt-5-nano') },
    { id: 'openai/gpt-4.1', name: 'OpenAI: GPT-4.1', contextLength: 1_047_576, maxCompletionTokens: 32_768, pricing: price(2, 8, 0.5), inputModalities: ['text', 'image', 'file'], supportedParameters: OPENAI_CHAT, tags: ['programming', 'legal', 'finance'], created: 1744675200, knowledgeCutoff: '2024-06-01', detailsUrl: docs('gpt-4.1') },
    { id: 'openai/gpt-4.1-mini', name: 'OpenAI: GPT-4.1 mini', contextLength: 1_047_576, maxCompletionTokens: 32_768, pricing: price(0.4, 1.6, 0.1), inputModalities: ['text', 'image', 'file'], supportedParameters: OPENAI_CHAT, tags: ['programming', 'translation'], created: 1744675200, knowledgeCutoff: '2024-06-01', detailsUrl: docs('gpt-4.1-mini') },
    { id: 'openai/gpt-4.1-nano', name: 'OpenAI: GPT-4.1 nano', contextLength: 1_047_576, maxCompletionTokens: 32_768, pricing: price(0.1, 0.4, 0.025), inputModalities: ['text', 'image', 'file'], supportedParameters: OPENAI_CHAT, tags: ['marketing', 'seo'], created: 1744675200, knowledgeCutoff: '2024-06-01', detailsUrl: docs('gpt-4.1-nano') },
    { id: 'openai/gpt-4o', name: 'OpenAI: GPT-4o', contextLength: 128_000, maxCompletionTokens: 16_384, pricing: price(2.5, 10, 1.25), inputModalities: ['text', 'image', 'file'], supportedParameters: OPENAI_CHAT, tags: ['roleplay', 'marketing', 'health'], created: 1715558400, knowledgeCutoff: '2023-10-01', detailsUrl: docs('gpt-4o') },
    { id: 'openai/gpt-4o-mini', name: 'OpenAI: GPT-4o mini', contextLength: 128_000, maxCompletionTokens: 16_384, pricing: price(0.15, 0.6, 0.075), inputModalities: ['text', 'image', 'file'], supportedParameters: OPENAI_CHAT, tags: ['trivia', 'translation', 'marketing'], created: 1721260800, knowledgeCutoff: '2023-10-01', detailsUrl: docs('gpt-4o-mini') },
    { id: 'openai/o4-mini', name: 'OpenAI: o4-mini', contextLength: 200_000, maxCompletionTokens: 100_000, pricing: price(1.1, 4.4, 0.275), inputModalities: ['text', 'image', 'file'], supportedParameters: OPENAI_REASONING, reasoning: { efforts: ['low', 'medium', 'high'] }, tags: ['science', 'academia', 'programming'], created: 1744848000, knowledgeCutoff: '2024-06-01', detailsUrl: docs('o4-mini') },
    { id: 'openai/o3', name: 'OpenAI: o3', contextLength: 200_000, maxCompletionTokens: 100_000, pricing: price(2, 8, 0.5), inputModalities: ['text', 'image', 'file'], supportedParameters: OPENAI_REASONING, reasoning: { efforts: ['low', 'medium', 'high'] }, tags: ['science', 'academia', 'finance'], created: 1744848000, knowledgeCutoff: '2024-06-01', detailsUrl: docs('o3') },
    ...openaiAudioModels,
  ],
  groq: [
    { id: 'meta-llama/llama-3.3-70b-instruct', upstreamId: 'llama-3.3-70b-versatile', name: 'Meta: Llama 3.3 70B Instruct', contextLength: 131_072, maxCompletionTokens: 32_768, pricing: price(0.59, 0.79), supportedParameters: CHAT, tags: ['programming', 'roleplay'], huggingFaceId: 'meta-llama/Llama-3.3-70B-Instruct', created: 1733443200 },
    { id: 'meta-llama/llama-3.1-8b-instruct', upstreamId: 'llama-3.1-8b-instant', name: 'Meta: Llama 3.1 8B Instruct', contextLength: 131_072, maxCompletionTokens: 131_072, pricing: price(0.05, 0.08), supportedParameters: CHAT, tags: ['trivia'], huggingFaceId: 'meta-llama/Llama-3.1-8B-Instruct', created: 1721692800 },
  ],
  together: [
    { id: 'meta-llama/llama-3.3-70b-instruct', upstreamId: 'meta-llama/Llama-3.3-70B-Instruct-Turbo', name: 'Meta: Llama 3.3 70B Instruct', contextLength: 131_072, maxCompletionTokens: 8_192, pricing: price(0.88, 0.88), supportedParameters: OPEN_WEIGHTS, tags: ['programming', 'roleplay'], huggingFaceId: 'meta-llama/Llama-3.3-70B-Instruct', created: 1733443200 },
  ],
  fireworks: [
    { id: 'meta-llama/llama-3.3-70b-instruct', upstreamId: 'accounts/fireworks/models/llama-v3p3-70b-instruct', name: 'Meta: Llama 3.3 70B Instruct', contextLength: 131_072, maxCompletionTokens: 16_384, pricing: price(0.9, 0.9), supportedParameters: OPEN_WEIGHTS, tags: ['programming', 'roleplay'], huggingFaceId: 'meta-llama/Llama-3.3-70B-Instruct', created: 1733443200 },
  ],
  mistral: [
    { id: 'mistralai/mistral-large', upstreamId: 'mistral-large-latest', name: 'Mistral: Mistral Large', contextLength: 131_072, pricing: price(2, 6), supportedParameters: CHAT, tags: ['legal', 'translation'], created: 1731974400 },
    { id: 'mistralai/mistral-small', upstreamId: 'mistral-small-latest', name: 'Mistral: Mistral Small', contextLength: 131_072, pricing: price(0.1, 0.3), supportedParameters: CHAT, tags: ['translation', 'marketing'], created: 1742256000 },
  ],
  deepseek: [
    { id: 'deepseek/deepseek-chat', upstreamId: 'deepseek-chat', name: 'DeepSeek: DeepSeek V3', contextLength: 65_536, maxCompletionTokens: 8_192, pricing: price(0.27, 1.1, 0.07), supportedParameters: CHAT, tags: ['programming', 'finance'], huggingFaceId: 'deepseek-ai/DeepSeek-V3', created: 1735257600 },
    { id: 'deepseek/deepseek-r1', upstreamId: 'deepseek-reasoner', name: 'DeepSeek: R1', contextLength: 65_536, maxCompletionTokens: 32_768, pricing: price(0.55, 2.19, 0.14), supportedParameters: ['max_tokens', 'reasoning', 'include_reasoning'], reasoning: { mandatory: true }, tags: ['science', 'academia'], huggingFaceId: 'deepseek-ai/DeepSeek-R1', created: 1737331200 },
  ],
  anthropic: anthropicModels,
  'google-ai-studio': geminiModels,
  xai: [
    { id: 'x-ai/grok-3-mini', upstreamId: 'grok-3-mini', name: 'xAI: Grok 3 Mini', contextLength: 131_072, pricing: price(0.3, 0.5, 0.075), supportedParameters: [...CHAT, 'reasoning', 'logprobs', 'top_logprobs'], reasoning: { efforts: ['low', 'high'] }, tags: ['science', 'trivia'], created: 1744156800 },
  ],
}

/** Hosted OpenAI-compatible providers the presets know: base URL and `/providers` facts. */
export const knownHosts: Record<string, { name: string; baseURL: string; headquarters?: string; privacyPolicyUrl?: string; termsOfServiceUrl?: string; statusPageUrl?: string }> = {
  anthropic: { name: 'Anthropic', baseURL: 'https://api.anthropic.com', headquarters: 'US', privacyPolicyUrl: 'https://www.anthropic.com/legal/privacy', termsOfServiceUrl: 'https://www.anthropic.com/legal/commercial-terms', statusPageUrl: 'https://status.claude.com/' },
  'google-ai-studio': { name: 'Google AI Studio', baseURL: 'https://generativelanguage.googleapis.com', headquarters: 'US', privacyPolicyUrl: 'https://policies.google.com/privacy', termsOfServiceUrl: 'https://ai.google.dev/gemini-api/terms', statusPageUrl: 'https://aistudio.google.com/status' },
  openai: { name: 'OpenAI', baseURL: 'https://api.openai.com/v1', headquarters: 'US', privacyPolicyUrl: 'https://openai.com/policies/privacy-policy/', termsOfServiceUrl: 'https://openai.com/policies/row-terms-of-use/', statusPageUrl: 'https://status.openai.com/' },
  groq: { name: 'Groq', baseURL: 'https://api.groq.com/openai/v1', headquarters: 'US', privacyPolicyUrl: 'https://groq.com/privacy-policy/', termsOfServiceUrl: 'https://groq.com/terms-of-use/', statusPageUrl: 'https://groqstatus.com/' },
  together: { name: 'Together', baseURL: 'https://api.together.xyz/v1', headquarters: 'US', privacyPolicyUrl: 'https://www.together.ai/privacy', termsOfServiceUrl: 'https://www.together.ai/terms-of-service' },
  fireworks: { name: 'Fireworks', baseURL: 'https://api.fireworks.ai/inference/v1', headquarters: 'US', privacyPolicyUrl: 'https://fireworks.ai/privacy-policy', termsOfServiceUrl: 'https://fireworks.ai/terms-of-service' },
  mistral: { name: 'Mistral', baseURL: 'https://api.mistral.ai/v1', headquarters: 'FR', privacyPolicyUrl: 'https://mistral.ai/terms/#privacy-policy', termsOfServiceUrl: 'https://mistral.ai/terms/' },
  deepseek: { name: 'DeepSeek', baseURL: 'https://api.deepseek.com/v1', headquarters: 'CN', privacyPolicyUrl: 'https://cdn.deepseek.com/policies/en-US/deepseek-privacy-policy.html', termsOfServiceUrl: 'https://cdn.deepseek.com/policies/en-US/deepseek-terms-of-use.html' },
  xai: { name: 'xAI', baseURL: 'https://api.x.ai/v1', headquarters: 'US', privacyPolicyUrl: 'https://x.ai/legal/privacy-policy', termsOfServiceUrl: 'https://x.ai/legal/terms-of-service' },
}

/** Model authors' display facts for `author_info`. */
export const knownAuthors: Record<string, { name: string; websiteUrl: string }> = {
  openai: { name: 'OpenAI', websiteUrl: 'https://openai.com' },
  'meta-llama': { name: 'Meta', websiteUrl: 'https://llama.com' },
  mistralai: { name: 'Mistral', websiteUrl: 'https://mistral.ai' },
  deepseek: { name: 'DeepSeek', websiteUrl: 'https://deepseek.com' },
  'x-ai': { name: 'xAI', websiteUrl: 'https://x.ai' },
  anthropic: { name: 'Anthropic', websiteUrl: 'https://anthropic.com' },
  google: { name: 'Google', websiteUrl: 'https://ai.google.dev' },
  demo: { name: 'model-gateway demo', websiteUrl: '' },
}
