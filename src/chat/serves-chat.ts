import { invalidRequest } from '../errors'
import type { Attempt } from '../routing/plan'
import type { ChatRequest } from '../schemas/chat'

const CHAT = '/chat/completions'
const endpointsOf = (attempt: Attempt) => attempt.offer.model.endpoints ?? [CHAT]

/** The attempts whose model serves chat completions; a 400 naming what the model serves instead when none does. */
export function servingChat(request: ChatRequest, attempts: Attempt[]): Attempt[] {
  const kept = attempts.filter((attempt) => endpointsOf(attempt).includes(CHAT))
  if (kept.length) return kept
  const model = request.model ?? attempts[0].entry.id
  const serves = [...new Set(attempts.flatMap(endpointsOf))].join(', ')
  throw invalidRequest(`model: ${model} does not serve ${CHAT} (it serves ${serves})`, request.model ? 'model' : 'models')
}
