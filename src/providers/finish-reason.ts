// The finish reasons providers send, mapped to the gateway's own set (docs/chat.md#finish-reasons): chat's answers
// and every generation record (src/billing/charge.ts) report them alike.

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
