import { invalidRequest } from '../errors'
import type { Attempt } from '../routing/plan'
import type { ChatRequest } from '../schemas/chat'

/** The completions a request asks for (`n`, default 1). */
export const choicesOf = (request: ChatRequest): number => request.n ?? 1

/**
 * `n > 1` (docs/limits.md): keeps the attempts whose provider answers that many choices in one request (its
 * `maxChoices`; OpenAI's 128, others 1, Anthropic and Gemini included); 400 naming `n` when none of them does.
 * Every choice is billed: the provider's usage covers them all, and an estimate counts them all.
 */
export function withChoices(request: ChatRequest, attempts: Attempt[]): Attempt[] {
  const n = choicesOf(request)
  if (n <= 1) return attempts
  const kept = attempts.filter((a) => (a.offer.provider.maxChoices ?? 1) >= n)
  if (kept.length) return kept
  const providers = [...new Set(attempts.map((a) => `${a.offer.provider.slug} (${a.entry.id})`))].join(', ')
  throw invalidRequest(
    `n: ${n} choices in one request are more than any provider of this request takes (${providers}); ask for them one request at a time`,
    'n',
  )
}
