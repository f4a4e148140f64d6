/*
 * What a Messages request passed on natively to Anthropic carries (docs/native.md#what-is-passed-on): the fields and
 * `anthropic-beta` values named here, never "everything but the gateway's own". A field or beta that changes what
 * Anthropic charges is passed on only when the catalogue prices it (src/messages/priced-fields.ts); anything else a
 * client sends is left out, and a body that needs a left-out beta is then refused by Anthropic, never served unpriced.
 */

/** The request fields passed on (`stream` is set by the call itself). */
export const FORWARDED_FIELDS = [
  'model',
  'messages',
  'system',
  'max_tokens',
  'stop_sequences',
  'temperature',
  'top_p',
  'top_k',
  'metadata',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
  'cache_control',
  'context_management',
  'service_tier',
  'speed',
  'inference_geo',
] as const

/**
 * The `anthropic-beta` values passed on: features billed at the catalogue's prices (fast mode and one-hour cache
 * writes only with the request's priced `speed` or `ttl`). Files, MCP, code execution, skills, search and other server
 * tools are not: they reach the operator's own account or run tools the gateway does not bill.
 */
export const FORWARDED_BETAS: ReadonlySet<string> = new Set([
  'claude-code-20250219',
  'interleaved-thinking-2025-05-14',
  'fine-grained-tool-streaming-2025-05-14',
  'token-efficient-tools-2025-02-19',
  'context-management-2025-06-27',
  'prompt-caching-2024-07-31',
  'extended-cache-ttl-2025-04-11',
  'pdfs-2024-09-25',
  'output-128k-2025-02-19',
  'structured-outputs-2025-11-13',
  'effort-2025-11-24',
  'fast-mode-2026-02-01',
])

/** The client's `anthropic-beta` header with only the values passed on; undefined when none is left. */
export function forwardedBetas(header: string | undefined): string | undefined {
  if (!header) return undefined
  const kept = header
    .split(',')
    .map((beta) => beta.trim())
    .filter((beta) => FORWARDED_BETAS.has(beta))
  return kept.length ? [...new Set(kept)].join(',') : undefined
}

/** The client's request as passed on: the forwarded fields it has, nothing else. */
export function forwardedBody(request: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  for (const field of FORWARDED_FIELDS) if (request[field] !== undefined) body[field] = request[field]
  return body
}
