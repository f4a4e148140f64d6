import type { ResponsesRequest } from '../schemas/responses'
import { type Json, objectOf, objectsOf } from './json'

/** What every Response object of one request shares: its id, time, request and served model. */
export interface ResponseFrame {
  id: string
  /** Unix seconds. */
  createdAt: number
  request: ResponsesRequest
  /** Whether it is stored (the request's `store`, default true). */
  store: boolean
  model: string
  provider?: string
  /** The gateway's clock (epoch ms): a completed response's `completed_at`. */
  now: () => number
}

const utf8 = new TextEncoder()

/** Whether the request asks for the output text's logprobs (`include: ["message.output_text.logprobs"]`). */
export const wantsLogprobs = (request: ResponsesRequest): boolean => request.include?.includes('message.output_text.logprobs') === true

// A token's UTF-8 bytes: chat's own, or (chat may send null) those of its text.
const bytesOf = (entry: Json): number[] => (Array.isArray(entry.bytes) ? entry.bytes : [...utf8.encode(String(entry.token ?? ''))])

/**
 * Chat's logprobs entries (`choices[].logprobs.content`: `{ token, logprob, bytes, top_logprobs }`) as an output_text
 * part's `logprobs` (docs/responses.md#refusals-and-logprobs): `{ token, logprob, bytes, top_logprobs: [{ token, logprob, bytes }] }`.
 */
export function partLogprobsOf(entries: unknown): Json[] {
  if (!Array.isArray(entries)) return []
  return entries.map((entry: Json) => ({
    token: entry.token,
    logprob: entry.logprob,
    bytes: bytesOf(entry),
    top_logprobs: (Array.isArray(entry.top_logprobs) ? entry.top_logprobs : []).map((top: Json) => ({
      token: top.token,
      logprob: top.logprob,
      bytes: bytesOf(top),
    })),
  }))
}

/**
 * A part's logprobs as response.output_text.delta and response.output_text.done carry them (OpenAI's ResponseLogProb:
 * `{ token, logprob, top_logprobs: [{ token, logprob }] }`, no bytes).
 */
export const eventLogprobsOf = (logprobs: Json[]): Json[] =>
  logprobs.map(({ token, logprob, top_logprobs }) => ({
    token,
    logprob,
    top_logprobs: objectsOf(top_logprobs).map((top) => ({ token: top.token, logprob: top.logprob })),
  }))

/** The Response object's status after a chat finish reason (docs/responses.md#the-response). */
export function outcomeOf(finishReason: string | null | undefined): { status: 'completed' | 'incomplete' | 'failed'; incomplete_details: Json | null } {
  if (finishReason === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }
  if (finishReason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } }
  if (finishReason === 'error') return { status: 'failed', incomplete_details: null }
  return { status: 'completed', incomplete_details: null }
}

/**
 * Chat's `cost_details` (docs/chat.md#usage-and-cost) as the Responses API's usage shows them (OpenRouter's names):
 * `upstream_inference_cost`, `upstream_inference_input_cost` and `upstream_inference_output_cost`, then chat's
 * prompt and completions costs, kept. Anything that is not an object is left as it is.
 */
export function responsesCostDetails(details: unknown): unknown {
  if (!details || typeof details !== 'object' || Array.isArray(details)) return details
  const { upstream_inference_cost, upstream_inference_prompt_cost, upstream_inference_completions_cost, ...rest } = details as Json
  return {
    upstream_inference_cost,
    upstream_inference_input_cost: upstream_inference_prompt_cost,
    upstream_inference_output_cost: upstream_inference_completions_cost,
    upstream_inference_prompt_cost,
    upstream_inference_completions_cost,
    ...rest,
  }
}

/**
 * Chat's usage (docs/chat.md#usage-and-cost) in the Responses API's names; the gateway's cost fields ride along
 * (`cost`, `cost_currency`, `cost_eur`, `is_byok`, `cost_details` in the Responses API's names, `estimated`).
 */
export function usageOf(usage: Json | undefined): Json | null {
  if (!usage) return null
  const { prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details, completion_tokens_details, ...extra } = usage
  if (extra.cost_details !== undefined) extra.cost_details = responsesCostDetails(extra.cost_details)
  const promptDetails = objectOf(prompt_tokens_details)
  const inputDetails: Json = { cached_tokens: promptDetails.cached_tokens ?? 0 }
  if (promptDetails.cache_write_tokens !== undefined) inputDetails.cache_write_tokens = promptDetails.cache_write_tokens
  return {
    input_tokens: prompt_tokens,
    input_tokens_details: inputDetails,
    output_tokens: completion_tokens,
    output_tokens_details: { reasoning_tokens: objectOf(completion_tokens_details).reasoning_tokens ?? 0 },
    total_tokens,
    ...extra,
  }
}

/** The tools of the request as a Response object shows them (function tools, `strict` filled in). */
const toolsOf = (request: ResponsesRequest): Json[] =>
  (request.tools ?? []).map((tool: Json) => ({ description: null, parameters: null, strict: true, ...tool }))

/**
 * A Response object (docs/responses.md#the-response): the frame's fields, then the state given. `completed_at` is
 * now when the state is `completed`, else null; the penalties, which a Responses request does not set here, null.
 */
export function responseObject(
  frame: ResponseFrame,
  state: { status: string; output: Json[]; usage: Json | null; error?: Json | null; incomplete_details?: Json | null },
): Json {
  const { request } = frame
  return {
    id: frame.id,
    object: 'response',
    created_at: frame.createdAt,
    status: state.status,
    background: false,
    completed_at: state.status === 'completed' ? Math.floor(frame.now() / 1000) : null,
    error: state.error ?? null,
    incomplete_details: state.incomplete_details ?? null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: frame.model,
    ...(frame.provider ? { provider: frame.provider } : {}),
    output: state.output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    frequency_penalty: null,
    presence_penalty: null,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    store: frame.store,
    temperature: request.temperature ?? null,
    text: { format: request.text?.format ?? { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: toolsOf(request),
    top_p: request.top_p ?? null,
    truncation: 'disabled',
    usage: state.usage,
    ...(request.user !== undefined ? { user: request.user } : {}),
    metadata: request.metadata ?? {},
  }
}

/** Output items as the client is shown them: a reasoning item's encrypted_content only when `include` asks for it. */
export function shownOutput(output: Json[], request: ResponsesRequest): Json[] {
  if (request.include?.includes('reasoning.encrypted_content')) return output
  return output.map((item) => {
    if (item.type !== 'reasoning' || item.encrypted_content === undefined) return item
    const { encrypted_content: _kept, ...shown } = item
    return shown
  })
}
