import { stringifyExact } from '../http/exact-json'
import { gatewayResponse } from '../http/respond'
import type { ChatRendering, ChatStreamRenderer } from './result'
import { chatUsageView } from './usage-view'

const DONE = Buffer.from('data: [DONE]\n\n')

/** Chat's own SSE (docs/chat.md#streaming): each part as a `data:` event, then `data: [DONE]`. */
const chatSse: ChatStreamRenderer = {
  part: (chunk) => Buffer.from(`data: ${stringifyExact(chunk)}\n\n`),
  end: () => DONE,
}

/** Chat's own answers (docs/chat.md#the-answer): the completion with its usage as JSON, or chat's SSE. */
export const chatRendering = (requestId: string): ChatRendering => ({
  whole: ({ generationId, completion, billed }) =>
    gatewayResponse(
      stringifyExact({ ...completion, usage: chatUsageView(billed) }),
      200,
      { 'content-type': 'application/json; charset=utf-8', 'x-generation-id': generationId },
      requestId,
    ),
  stream: () => chatSse,
})
