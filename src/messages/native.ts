import type { GatewayError } from '../errors'
import { type NativeRoute, withCostFields } from '../native/route'
import { traitsOf, usageFrom, type AnthropicUsage } from '../providers/anthropic-translate'
import type { NativeEvent } from '../contracts'
import type { Attempt } from '../routing/plan'
import type { MessagesRequest } from '../schemas/messages'
import { anthropicError } from './errors'
import { forwardedBetas, forwardedBody } from './forwarded'
import { thinkingForModel } from './native-thinking'
import { messagesPricedFields } from './priced-fields'
import { sseEvent } from './stream'
import { messagesUsage } from './usage'
import { chatUsageView } from '../chat/usage-view'

type Json = Record<string, unknown>
const encoder = new TextEncoder()

// Characters of generated text in a content_block_delta (text, thinking, tool input): what an estimate bills.
function deltaLength(delta: Json | undefined): number {
  if (!delta) return 0
  for (const key of ['text', 'thinking', 'partial_json'] as const) if (typeof delta[key] === 'string') return (delta[key] as string).length
  return 0
}

/** A message's `usage`: Anthropic's own with the gateway's cost fields; the billed usage in Anthropic's names when it sent none. */
const withGatewayUsage = (usage: unknown, view: Json): Json | null => withCostFields(usage, view, () => messagesUsage(view))

/**
 * The Messages API served natively by Anthropic (docs/native.md#messages): the client's request goes to Anthropic's
 * `/v1/messages` with the fields and `anthropic-beta` values the gateway passes on (src/messages/forwarded.ts), its
 * priced options priced or refused, the model id and a `thinking` the model would refuse replaced, with the client's
 * `anthropic-version`; the answer comes back with the generation's id, the gateway's model
 * id (the client's own when it sent a bare Anthropic id: `modelName`, src/messages/model-id.ts) and provider, and usage with the cost. Streamed, Anthropic's events pass through as they come, but for
 * message_delta and message_stop, which wait for the billing (message_delta then carries the gateway's usage).
 */
export function messagesNativeRoute(
  request: MessagesRequest,
  translated: NativeRoute['translated'],
  headers?: Record<string, string>,
  modelName: (served: string) => string = (served) => served,
): NativeRoute {
  const sent = forwardedBody(request)
  const passed: Record<string, string> = {}
  if (headers?.['anthropic-version']) passed['anthropic-version'] = headers['anthropic-version']
  const betas = forwardedBetas(headers?.['anthropic-beta'])
  if (betas) passed['anthropic-beta'] = betas
  return {
    api: 'messages',
    translated,
    headers: passed,
    pricedFields: messagesPricedFields(request),
    body: (attempt: Attempt) => thinkingForModel({ ...sent, model: attempt.offer.upstreamId }, traitsOf(attempt.offer.model, attempt.offer.upstreamId)),
    usageOf: (answer) => (answer.usage && typeof answer.usage === 'object' ? usageFrom(answer.usage as AnthropicUsage) : undefined),
    finishReasonOf: (answer) => (typeof answer.stop_reason === 'string' ? answer.stop_reason : null),
    answer: (answer, { attempt, generationId, usage }) => ({
      ...answer,
      id: generationId,
      model: modelName(attempt.entry.id),
      provider: attempt.offer.provider.name,
      usage: withGatewayUsage(answer.usage, usage),
    }),
    dialect(generationId) {
      let served: Attempt | undefined
      let started: AnthropicUsage = {}
      let delta: Json | undefined
      let stop: Json | undefined
      let failed = false
      const bytes = (event: Json) => encoder.encode(sseEvent(event))
      return {
        opened: (attempt) => {
          served = attempt
        },
        account({ type, data }: NativeEvent, tally) {
          if (type === 'message_start') {
            const message = (data.message ?? {}) as { id?: unknown; usage?: AnthropicUsage }
            if (typeof message.id === 'string') tally.upstreamId = message.id
            started = { ...(message.usage ?? {}) }
          } else if (type === 'content_block_delta') {
            tally.generatedChars += deltaLength(data.delta as Json | undefined)
          } else if (type === 'message_delta') {
            // Its usage is cumulative (Anthropic's streaming docs): with message_start's input counts, the whole usage.
            const usage = { ...started, ...Object.fromEntries(Object.entries((data.usage ?? {}) as Json).filter(([, value]) => value != null)) }
            tally.reported = usageFrom(usage as AnthropicUsage)
            const reason = (data.delta as Json | undefined)?.stop_reason
            if (typeof reason === 'string') tally.nativeFinishReason = reason
          }
        },
        forward({ type, data }: NativeEvent) {
          if (type === 'message_delta') {
            delta = data
            return undefined
          }
          if (type === 'message_stop') {
            stop = data
            return undefined
          }
          if (type === 'message_start' && served) {
            const message = (data.message ?? {}) as Json
            return bytes({ ...data, message: { ...message, id: generationId, model: modelName(served.entry.id), provider: served.offer.provider.name } })
          }
          return bytes(data)
        },
        fail(error: GatewayError) {
          failed = true
          return bytes({ type: 'error', error: anthropicError(error.status, error.message, error) })
        },
        finish(billed) {
          if (failed || !billed) return undefined
          let text = ''
          if (delta) text += sseEvent({ ...delta, usage: withGatewayUsage(delta.usage, chatUsageView(billed)) })
          if (stop) text += sseEvent(stop)
          return text ? encoder.encode(text) : undefined
        },
      }
    },
  }
}
