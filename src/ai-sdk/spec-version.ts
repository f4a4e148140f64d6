import type {
  LanguageModelV2CallWarning,
  LanguageModelV2FinishReason,
  LanguageModelV2Usage,
  LanguageModelV3FinishReason,
  LanguageModelV3Usage,
  SharedV3Warning,
} from '@ai-sdk/provider'
import { plainJson } from './json'

/**
 * What differs between the AI SDK's language model specification v2 (`ai` 5) and v3 (`ai` 6) in what the provider
 * answers: the finish reason, the usage and the warnings (docs/first-party.md#the-ai-sdk-provider).
 */

/** The specification versions the provider implements. */
export type SpecificationVersion = 'v2' | 'v3'

/** A setting or tool the gateway's chat cannot honour, before it is written as the version's warning. */
export interface Unsupported {
  feature: string
  details?: string
}

/** A chat usage object as the gateway answers it (docs/chat.md#usage-and-cost). */
export interface ChatUsage {
  prompt_tokens?: number
  completion_tokens?: number
  total_tokens?: number
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null
  completion_tokens_details?: { reasoning_tokens?: number } | null
  [field: string]: unknown
}

/** The AI SDK's unified finish reason of a chat finish_reason. */
function unifiedFinish(raw: string | null | undefined): LanguageModelV3FinishReason['unified'] | undefined {
  switch (raw) {
    case 'stop':
      return 'stop'
    case 'length':
      return 'length'
    case 'tool_calls':
    case 'function_call':
      return 'tool-calls'
    case 'content_filter':
      return 'content-filter'
    case 'error':
      return 'error'
    case null:
    case undefined:
      return undefined
    default:
      return 'other'
  }
}

/** A chat finish_reason as v3's `{ unified, raw }` (`other` when the gateway gave none). */
export const finishReasonV3 = (raw: string | null | undefined): LanguageModelV3FinishReason => ({
  unified: unifiedFinish(raw) ?? 'other',
  raw: raw ?? undefined,
})

/** A chat finish_reason as v2's string (`unknown` when the gateway gave none). */
export const finishReasonV2 = (raw: string | null | undefined): LanguageModelV2FinishReason => unifiedFinish(raw) ?? 'unknown'

/** A chat usage as v3's usage: input split into cache reads, writes and the rest; output into text and reasoning. */
export function usageV3(usage: ChatUsage | undefined): LanguageModelV3Usage {
  const input = usage?.prompt_tokens
  const output = usage?.completion_tokens
  const cacheRead = usage?.prompt_tokens_details?.cached_tokens
  const cacheWrite = usage?.prompt_tokens_details?.cache_write_tokens
  const reasoning = usage?.completion_tokens_details?.reasoning_tokens
  return {
    inputTokens: {
      total: input,
      noCache: input === undefined ? undefined : Math.max(0, input - (cacheRead ?? 0) - (cacheWrite ?? 0)),
      cacheRead,
      cacheWrite,
    },
    outputTokens: { total: output, text: output === undefined ? undefined : Math.max(0, output - (reasoning ?? 0)), reasoning },
    ...(usage ? { raw: plainJson(usage) } : {}),
  }
}

/** A chat usage as v2's usage. */
export function usageV2(usage: ChatUsage | undefined): LanguageModelV2Usage {
  const input = usage?.prompt_tokens
  const output = usage?.completion_tokens
  return {
    inputTokens: input,
    outputTokens: output,
    totalTokens: usage?.total_tokens ?? (input === undefined || output === undefined ? undefined : input + output),
    reasoningTokens: usage?.completion_tokens_details?.reasoning_tokens,
    cachedInputTokens: usage?.prompt_tokens_details?.cached_tokens,
  }
}

/** What is unsupported as v3's warnings. */
export const warningsV3 = (unsupported: Unsupported[]): SharedV3Warning[] =>
  unsupported.map((u) => ({ type: 'unsupported', feature: u.feature, ...(u.details ? { details: u.details } : {}) }))

/** What is unsupported as v2's warnings. */
export const warningsV2 = (unsupported: Unsupported[]): LanguageModelV2CallWarning[] =>
  unsupported.map((u) => ({ type: 'other', message: u.details ? `${u.feature}: ${u.details}` : `${u.feature} is not supported` }))
