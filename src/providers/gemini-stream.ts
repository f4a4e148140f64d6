import { blockedPromptError, finishReasonOf, geminiError, logprobsOf, readParts, usageOf, type GeminiResponse, type GeminiUsage } from './gemini-translate'
import type { ServerSentEvent } from './sse'
import type { UpstreamChunk, UpstreamSource } from '../contracts'
import { upstreamError } from './upstream-error'

/**
 * `streamGenerateContent?alt=sse` as OpenAI chunks. Each event is a whole GenerateContentResponse holding the new
 * parts: a first chunk carries `delta.role`, then text → `delta.content`, thought text → `delta.reasoning`, each
 * function call → one `delta.tool_calls` entry with its id, name and complete arguments (Gemini sends calls whole),
 * thought signatures → `delta.reasoning_details`; the finish reason goes in a chunk of its own, and the last
 * `usageMetadata` becomes a closing `{ choices: [], usage }` chunk. An `{ error }` event throws the mapped error.
 */
export async function* geminiChunks(
  events: AsyncIterable<ServerSentEvent>,
  provider: UpstreamSource,
  secrets: (string | undefined)[],
  nowSeconds: number,
): AsyncIterable<UpstreamChunk> {
  let received = 0
  let started = false
  let toolCalls = 0
  let signatures = 0
  let usage: GeminiUsage | undefined
  let base: Pick<UpstreamChunk, 'id' | 'created' | 'model'> = { created: nowSeconds }

  for await (const event of events) {
    if (!event.data.trim()) continue
    let body: GeminiResponse
    try {
      body = JSON.parse(event.data)
    } catch {
      throw upstreamError(provider, 'malformed_response', event.data.slice(0, 200))
    }
    received++
    if (body?.error) throw geminiError(provider, body.error.code ?? 0, event.data, {}, secrets)
    if (!base.id && body.responseId) base = { ...base, id: body.responseId }
    if (!base.model && body.modelVersion) base = { ...base, model: body.modelVersion }
    if (body.usageMetadata) usage = body.usageMetadata
    const candidate = body.candidates?.[0]
    if (!candidate) {
      if (body.promptFeedback?.blockReason) throw blockedPromptError(provider, body.promptFeedback)
      continue
    }

    const read = readParts(candidate.content?.parts, toolCalls, signatures)
    toolCalls += read.toolCalls.length
    signatures += read.signatures.length
    const delta: Record<string, unknown> = {}
    if (!started) delta.role = 'assistant'
    if (read.content) delta.content = read.content
    if (read.reasoning) delta.reasoning = read.reasoning
    if (read.toolCalls.length) delta.tool_calls = read.toolCalls
    if (read.signatures.length) delta.reasoning_details = read.signatures
    if (read.images.length) delta.images = read.images
    const logprobs = logprobsOf(candidate.logprobsResult)
    if (!started || Object.keys(delta).length) {
      if (!started && Object.keys(delta).length === 1) delta.content = ''
      started = true
      yield { ...base, choices: [{ index: 0, delta, finish_reason: null, ...(logprobs ? { logprobs } : {}) }] }
    }
    if (candidate.finishReason) {
      yield {
        ...base,
        choices: [{ index: 0, delta: {}, finish_reason: finishReasonOf(candidate.finishReason, toolCalls > 0), native_finish_reason: candidate.finishReason }],
      }
    }
  }
  if (!received) throw upstreamError(provider, 'malformed_response', 'the event stream ended without an event')
  if (usage) yield { ...base, choices: [], usage: usageOf(usage) }
}
