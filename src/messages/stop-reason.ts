/*
 * A chat finish reason → Anthropic's stop_reason (docs/messages.md#stop-reasons). A provider that spoke Anthropic's
 * language (the Anthropic provider) left its own reason as `native_finish_reason`: it is kept as it is.
 */

const ANTHROPIC_REASONS = new Set(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded'])
const BY_FINISH: Record<string, string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', content_filter: 'refusal', error: 'end_turn' }

/** What a stop reason and the stop sequence that matched, if known. */
export interface StopOf {
  stop_reason: string
  stop_sequence: string | null
}

/**
 * The stop reason of a finished choice: the native reason when it is one of Anthropic's, else the chat reason mapped
 * (stop → end_turn, length → max_tokens, tool_calls → tool_use, content_filter → refusal). The stop sequence is named
 * when it is known: the provider named it (`stop_reason` of vLLM-like hosts), or the request had only one.
 */
export function stopOf(finish: string | null | undefined, native: unknown, matched: unknown, stops: string[] | undefined): StopOf {
  const nativeReason = typeof native === 'string' && ANTHROPIC_REASONS.has(native) ? native : undefined
  const named = typeof matched === 'string' && stops?.includes(matched) ? matched : undefined
  const reason = nativeReason ?? (named ? 'stop_sequence' : (BY_FINISH[finish ?? 'stop'] ?? 'end_turn'))
  if (reason !== 'stop_sequence') return { stop_reason: reason, stop_sequence: null }
  return { stop_reason: reason, stop_sequence: named ?? (stops?.length === 1 ? stops[0] : null) }
}
