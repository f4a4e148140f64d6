import { idBytes } from '../crypto/id-bytes'
import type { UpstreamChoice, UpstreamChunk } from '../providers/types'

const FINISH_REASONS = new Set(['stop', 'length', 'tool_calls', 'content_filter', 'error'])
const FILTERED = new Set([
  'SAFETY',
  'refusal',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'LANGUAGE',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
])
const FAILED = new Set(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS'])
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** A new generation id: `gen-` plus the time and 20 random characters. */
export function newGenerationId(now: number): string {
  const bytes = idBytes(20)
  let random = ''
  for (const byte of bytes) random += ALPHABET[byte % ALPHABET.length]
  return `gen-${Math.floor(now / 1000)}-${random}`
}

/** Maps a provider's finish reason to the set of docs/chat.md#finish-reasons. */
export function normalizeFinishReason(native: string | null | undefined): string | null {
  if (native === null || native === undefined) return null
  if (FINISH_REASONS.has(native)) return native
  if (native === 'function_call' || native === 'tool_use') return 'tool_calls'
  if (native === 'max_tokens' || native === 'MAX_TOKENS' || native === 'model_context_window_exceeded' || native === 'CONTINUATION') return 'length'
  if (FILTERED.has(native)) return 'content_filter'
  if (FAILED.has(native)) return 'error'
  return 'stop'
}

/** A whole completion's choice as docs/chat.md#the-answer shows it. */
export function shapeChoice(choice: UpstreamChoice) {
  const { role: _role, content, tool_calls, refusal, reasoning, ...rest } = choice.message
  return {
    index: choice.index ?? 0,
    message: {
      role: 'assistant' as const,
      content: content ?? null,
      refusal: refusal ?? null,
      reasoning: reasoning ?? null,
      ...(Array.isArray(tool_calls) && tool_calls.length ? { tool_calls: tool_calls.map((call, index) => ({ index, ...(call as object) })) } : {}),
      ...rest,
    },
    finish_reason: normalizeFinishReason(choice.finish_reason),
    native_finish_reason: (typeof choice.native_finish_reason === 'string' ? choice.native_finish_reason : choice.finish_reason) ?? null,
    logprobs: choice.logprobs ?? null,
  }
}

/** A streamed chunk's choices with finish reasons normalized. */
export function shapeChunkChoices(choices: UpstreamChunk['choices']) {
  // Copied key by key: a rest pattern or a spread here costs several times more, once per chunk (bench/README.md#object-literals-on-node-20).
  const shaped: Record<string, unknown>[] = new Array(choices.length)
  for (let i = 0; i < choices.length; i++) {
    const choice = choices[i] as unknown as Record<string, unknown>
    const copy: Record<string, unknown> = {}
    for (const key in choice) if (key !== 'finish_reason' && key !== 'native_finish_reason') copy[key] = choice[key]
    const finishReason = choice.finish_reason as string | null | undefined
    copy.finish_reason = normalizeFinishReason(finishReason)
    if (finishReason) copy.native_finish_reason = typeof choice.native_finish_reason === 'string' ? choice.native_finish_reason : finishReason
    shaped[i] = copy
  }
  return shaped
}
