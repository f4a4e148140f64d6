import type { UpstreamChatRequest } from '../providers/types'
import type { Attempt } from '../routing/plan'
import type { ChatRequest } from '../schemas/chat'
import { withoutConsumedFields } from './request-fields'

// The request's fields that routing consumes: the provider receives its own model id instead.
const ROUTING_FIELDS: ReadonlySet<string> = new Set(['model', 'models', 'provider'])

/** The request as the attempt's provider receives it: gateway-only fields removed (src/chat/request-fields.ts), the provider's model id. */
export function upstreamRequestFor(request: ChatRequest, attempt: Attempt): UpstreamChatRequest {
  const upstream = withoutConsumedFields(request as unknown as Record<string, unknown>, attempt.offer.model, ROUTING_FIELDS)
  upstream.model = attempt.offer.upstreamId
  return upstream as unknown as UpstreamChatRequest
}
