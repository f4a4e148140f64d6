import type { GatewayError } from '../errors'
import { stringifyExact } from '../http/exact-json'
import { chatUsageView } from '../chat/usage-view'
import { type NativeRoute, withCostFields } from '../native/route'
import type { NativeEvent, UpstreamUsage } from '../contracts'
import type { Attempt } from '../routing/plan'
import type { ResolvedItem, ResponsesRequest } from '../schemas/responses'
import { type ItemPrefix, newItemId } from './ids'
import { type Json, objectOf, objectsOf } from './json'
import { type ResponseFrame, responsesCostDetails, usageOf } from './output'
import { reasoningDetailsOf } from './reasoning'
import type { StreamEnd } from './stream'
import { responseErrorOf } from './stream'

const encoder = new TextEncoder()

/**
 * The fields of a Responses request passed on to OpenAI (docs/native.md#what-is-passed-on): an allowlist, never
 * "everything but the gateway's own". `input` is the resolved conversation and `store` false (set below), `stream` is
 * set by the call; `service_tier` is priced or refused before (docs/money.md#priced-options); `prompt` and
 * `conversation` are refused (src/responses/request.ts), and anything else a client sends is left out.
 */
export const FORWARDED_FIELDS = [
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'text',
  'reasoning',
  'max_output_tokens',
  'temperature',
  'top_p',
  'top_logprobs',
  'metadata',
  'user',
  'include',
  'service_tier',
  'truncation',
  'safety_identifier',
  'prompt_cache_key',
  'prompt_cache_retention',
] as const
const PREFIXES: Record<string, ItemPrefix> = { message: 'msg', function_call: 'fc', function_call_output: 'fco', reasoning: 'rs' }
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed'])
const TEXT_DELTAS = new Set([
  'response.output_text.delta',
  'response.function_call_arguments.delta',
  'response.reasoning_summary_text.delta',
  'response.reasoning_text.delta',
  'response.refusal.delta',
])

/** How a Response object says it ended: its `incomplete_details.reason`, else its `status` (what `native_finish_reason` shows). */
const finishReasonOfResponse = (response: Json): string | null => {
  const reason = objectOf(response.incomplete_details).reason
  return typeof reason === 'string' ? reason : typeof response.status === 'string' ? response.status : null
}

/** The Responses API's usage in chat's names (what billing reads); undefined when the answer reports none. */
export function chatUsageOf(value: unknown): UpstreamUsage | undefined {
  if (!value || typeof value !== 'object') return undefined
  // The counts as OpenAI sent them: billing refuses an answer whose token counts are not numbers (docs/native.md).
  const usage = value as Json
  return {
    prompt_tokens: usage.input_tokens as number,
    completion_tokens: usage.output_tokens as number,
    total_tokens: usage.total_tokens as number | undefined,
    prompt_tokens_details: { cached_tokens: (objectOf(usage.input_tokens_details).cached_tokens as number | undefined) ?? 0 },
    completion_tokens_details: { reasoning_tokens: (objectOf(usage.output_tokens_details).reasoning_tokens as number | undefined) ?? 0 },
  }
}

/**
 * The conversation as OpenAI receives it: items without the gateway's ids (OpenAI stores nothing of it, `store:
 * false`); reasoning items only when they carry OpenAI's own encrypted content (a summary alone, or another
 * provider's signed thinking, means nothing to it).
 */
export function upstreamInput(conversation: ResolvedItem[]): Json[] {
  const items: Json[] = []
  for (const item of conversation as Json[]) {
    if (item.type === 'reasoning') {
      if (typeof item.encrypted_content === 'string' && !reasoningDetailsOf(item.encrypted_content).length) items.push(item)
      continue
    }
    const { id: _id, ...rest } = item
    items.push(rest)
  }
  return items
}

/** What the Responses route needs of serveResponses: the request, its conversation, the response's frame, and how it is stored. */
export interface ResponsesNativeInput {
  request: ResponsesRequest
  /** The stored conversation and the request's input, references resolved. */
  conversation: ResolvedItem[]
  frame: ResponseFrame
  /** Stores a finished response (its Response object and full output). */
  save(end: StreamEnd): Promise<void>
  translated: NativeRoute['translated']
}

/**
 * The Responses API served natively by OpenAI (docs/native.md#responses): the request goes to OpenAI's `/responses`
 * with the whole conversation as its input (`previous_response_id` is the gateway's, resolved here) and `store:
 * false`; the answer comes back under the gateway's response id, item ids, model and provider, its usage with the
 * cost, and is stored as a translated one is. Streamed, OpenAI's events pass through as they come, renamed alike;
 * the last one (response.completed, .incomplete or .failed) waits for the billing and the storing.
 */
export function responsesNativeRoute(input: ResponsesNativeInput): NativeRoute {
  const { request, frame } = input
  const sent: Json = {}
  for (const field of FORWARDED_FIELDS) if (request[field] !== undefined) sent[field] = request[field]
  sent.input = upstreamInput(input.conversation)
  sent.store = false
  const ids = new Map<string, string>()
  // The gateway's id for an item of OpenAI's (the same one each time it is named).
  const idOf = (item: Json): unknown => {
    const upstream = item.id
    if (typeof upstream !== 'string') return upstream
    let id = ids.get(upstream)
    if (!id) {
      const prefix = PREFIXES[String(item.type)]
      id = prefix ? newItemId(prefix, frame.id) : upstream
      ids.set(upstream, id)
    }
    return id
  }
  const renamedItem = (item: Json): Json => (item && typeof item === 'object' && typeof item.id === 'string' ? { ...item, id: idOf(item) } : item)
  // OpenRouter's fields OpenAI leaves out (docs/native.md#responses): null penalties, and `completed_at` (now, when completed).
  const openRouterFields = (response: Json): Json => ({
    completed_at: response.status === 'completed' ? Math.floor(frame.now() / 1000) : null,
    frequency_penalty: null,
    presence_penalty: null,
  })
  const renamedResponse = (response: Json, attempt: Attempt | undefined): Json => ({
    ...openRouterFields(response),
    ...response,
    id: frame.id,
    ...(attempt ? { model: attempt.entry.id, provider: attempt.offer.provider.name } : {}),
    output: Array.isArray(response.output) ? response.output.map(renamedItem) : response.output,
    previous_response_id: request.previous_response_id ?? null,
    store: frame.store,
  })
  // The billed usage's cost fields, its cost_details in the Responses API's names.
  const withCost = (response: Json, usage: Json): Json => ({
    ...response,
    usage: withCostFields(response.usage, { ...usage, cost_details: responsesCostDetails(usage.cost_details) }, () => usageOf(usage)),
  })

  return {
    api: 'responses',
    translated: input.translated,
    body: (attempt) => ({ ...sent, model: attempt.offer.upstreamId }),
    usageOf: (answer) => chatUsageOf(answer.usage),
    finishReasonOf: finishReasonOfResponse,
    async answer(answer, { attempt, usage }) {
      const response = withCost(renamedResponse(answer, attempt), usage)
      await input.save({ response, output: objectsOf(response.output) })
      return response
    },
    dialect() {
      let served: Attempt | undefined
      let sequence = -1
      let snapshot: Json | undefined
      let terminal: Json | undefined
      let failed = false
      const bytes = (data: Json) => encoder.encode(`event: ${data.type}\ndata: ${stringifyExact(data)}\n\n`)
      const next = () => ++sequence
      return {
        opened: (attempt) => {
          served = attempt
        },
        account({ type, data }: NativeEvent, tally) {
          const response = data.response as Json | undefined
          if (type === 'response.created' && typeof response?.id === 'string') tally.upstreamId = response.id
          else if (TEXT_DELTAS.has(type) && typeof data.delta === 'string') tally.generatedChars += data.delta.length
          else if (TERMINAL.has(type) && response) {
            const usage = chatUsageOf(response.usage)
            if (usage) tally.reported = usage
            tally.nativeFinishReason = finishReasonOfResponse(response)
          }
        },
        forward({ data }: NativeEvent) {
          if (typeof data.sequence_number === 'number') sequence = data.sequence_number
          const out: Json = { ...data }
          if (out.response) out.response = snapshot = renamedResponse(objectOf(out.response), served)
          if (out.item) out.item = renamedItem(out.item as Json)
          if (typeof out.item_id === 'string') out.item_id = ids.get(out.item_id) ?? out.item_id
          if (TERMINAL.has(String(out.type))) {
            terminal = out
            return undefined
          }
          return bytes(out)
        },
        fail(error: GatewayError) {
          failed = true
          const failure = responseErrorOf({ code: error.status, message: error.message, metadata: error.metadata })
          if (!snapshot) return bytes({ type: 'error', code: failure.code, message: failure.message, param: null, sequence_number: next() })
          return bytes({ type: 'response.failed', response: { ...snapshot, status: 'failed', error: failure }, sequence_number: next() })
        },
        async finish(billed) {
          if (failed || !billed) return undefined
          if (!terminal) {
            // The provider ended its stream without saying how the response ended.
            const failure = responseErrorOf({ code: 502, message: 'The stream ended before the response was complete' })
            return bytes({ type: 'response.failed', response: { ...(snapshot ?? {}), status: 'failed', error: failure }, sequence_number: next() })
          }
          const response = withCost(objectOf(terminal.response), chatUsageView(billed))
          await input.save({ response, output: objectsOf(response.output) })
          return bytes({ ...terminal, response })
        },
      }
    },
  }
}
