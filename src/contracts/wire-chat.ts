/*
 * The chat wire format as providers speak it (OpenAI's chat completions, with OpenRouter's additions the gateway
 * passes on): plain types, written here and not derived from the HTTP schemas of src/schemas/; a type test checks that
 * what the schemas accept is assignable to them (test/unit/contracts-schemas.test.ts, docs/development.md).
 */

/** A prompt-cache breakpoint (`cache_control`) on a content part, a message, a tool or the whole request (docs/limits.md). */
export interface UpstreamCacheControl {
  type: 'ephemeral'
  ttl?: '5m' | '1h'
}

/** One content part of a message, as OpenAI shapes it. */
export type UpstreamContentPart =
  | { type: 'text'; text: string; cache_control?: UpstreamCacheControl }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' }; cache_control?: UpstreamCacheControl }
  | { type: 'input_audio'; input_audio: { data: string; format: string }; cache_control?: UpstreamCacheControl }
  | {
      type: 'file'
      file: { file_data?: string; file_id?: string; filename?: string; [key: string]: unknown }
      cache_control?: UpstreamCacheControl
    }
  | { type: 'refusal'; refusal: string }

/** A message's content: a string, or content parts. */
export type UpstreamContent = string | UpstreamContentPart[]

/** A tool call of an assistant message. */
export interface UpstreamToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

/** One chat message, every OpenAI role. */
export type UpstreamMessage =
  | { role: 'system'; content: UpstreamContent; name?: string; cache_control?: UpstreamCacheControl; [key: string]: unknown }
  | { role: 'developer'; content: UpstreamContent; name?: string; cache_control?: UpstreamCacheControl; [key: string]: unknown }
  | { role: 'user'; content: UpstreamContent; name?: string; cache_control?: UpstreamCacheControl; [key: string]: unknown }
  | {
      role: 'assistant'
      content?: UpstreamContent | null
      name?: string
      tool_calls?: UpstreamToolCall[]
      refusal?: string | null
      reasoning?: string | null
      cache_control?: UpstreamCacheControl
      [key: string]: unknown
    }
  | { role: 'tool'; content: UpstreamContent; tool_call_id: string; cache_control?: UpstreamCacheControl; [key: string]: unknown }

/** A function tool the model may call. */
export interface UpstreamTool {
  type: 'function'
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null }
  cache_control?: UpstreamCacheControl
}

/** Which tool the model must call, if any. */
export type UpstreamToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } }

/** The shape the answer must take. */
export type UpstreamResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null } }

/** A reasoning effort, least to most (OpenRouter's and OpenAI's values; docs/reasoning.md). */
export type UpstreamReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max'

/** OpenRouter's reasoning settings (docs/reasoning.md), null fields already left out. */
export interface UpstreamReasoning {
  effort?: UpstreamReasoningEffort
  max_tokens?: number
  exclude?: boolean
  enabled?: boolean
  summary?: 'auto' | 'concise' | 'detailed'
}

/** The OpenAI-format request a provider receives: the client's request with the provider's own model id. */
export interface UpstreamChatRequest {
  model: string
  messages: UpstreamMessage[]
  stream?: boolean
  stream_options?: { include_usage?: boolean } | null
  max_tokens?: number | null
  max_completion_tokens?: number | null
  temperature?: number | null
  top_p?: number | null
  top_k?: number | null
  frequency_penalty?: number | null
  presence_penalty?: number | null
  repetition_penalty?: number | null
  min_p?: number | null
  seed?: number | null
  stop?: string | string[] | null
  n?: number | null
  logprobs?: boolean | null
  top_logprobs?: number | null
  logit_bias?: Record<string, number> | null
  tools?: UpstreamTool[]
  tool_choice?: UpstreamToolChoice
  parallel_tool_calls?: boolean | null
  response_format?: UpstreamResponseFormat
  reasoning?: UpstreamReasoning
  reasoning_effort?: UpstreamReasoningEffort
  include_reasoning?: boolean | null
  user?: string
  service_tier?: string | null
  web_search_options?: Record<string, unknown> | null
  cache_control?: UpstreamCacheControl
  [key: string]: unknown
}

/** Token counts as OpenAI reports them. */
export interface UpstreamUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens?: number
  /** `cache_write_tokens`: every prompt token written to the cache; `cache_write_1h_tokens`: those of them written for an hour. */
  prompt_tokens_details?: {
    cached_tokens?: number
    audio_tokens?: number
    cache_write_tokens?: number
    cache_write_1h_tokens?: number
    [key: string]: unknown
  } | null
  completion_tokens_details?: {
    reasoning_tokens?: number
    audio_tokens?: number
    accepted_prediction_tokens?: number
    rejected_prediction_tokens?: number
    image_tokens?: number
    [key: string]: unknown
  } | null
  [key: string]: unknown
}

/** One choice of a whole completion, as OpenAI shapes it. */
export interface UpstreamChoice {
  index: number
  message: { role: 'assistant'; content: string | null; tool_calls?: unknown[]; refusal?: string | null; reasoning?: string | null; [key: string]: unknown }
  finish_reason: string | null
  logprobs?: unknown
  [key: string]: unknown
}

/** A whole chat completion as OpenAI shapes it. */
export interface UpstreamCompletion {
  id?: string
  created?: number
  model?: string
  choices: UpstreamChoice[]
  usage?: UpstreamUsage | null
  system_fingerprint?: string | null
  service_tier?: string | null
  [key: string]: unknown
}

/**
 * A provider's stream chunks as they come; `nextNow` (optional) answers at once with a chunk (or the end) already in
 * hand, undefined when the next one has to be waited for: a stream's body sends what is in hand in one go
 * (docs/performance.md#where-the-time-goes).
 */
export interface ChunkIterator<C> extends AsyncIterator<C> {
  nextNow?(): IteratorResult<C> | undefined
}

/** One streamed chunk as OpenAI shapes it. */
export interface UpstreamChunk {
  id?: string
  created?: number
  model?: string
  choices: { index: number; delta: Record<string, unknown>; finish_reason?: string | null; logprobs?: unknown; [key: string]: unknown }[]
  usage?: UpstreamUsage | null
  system_fingerprint?: string | null
  service_tier?: string | null
  [key: string]: unknown
}
