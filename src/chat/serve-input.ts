import type { Hold } from '../billing/holds'
import type { GenerationTags } from '../http/attribution'
import type { Attempt } from '../routing/plan'
import type { ChatRequest } from '../schemas/chat'
import type { Principal } from '../stores/account-types'
import type { PolicyRun } from '../policies/run'

/** What a chat completion, whole or streamed, is served from: the request, its planned attempts, its hold and the client's signals. */
export interface ChatServeInput {
  principal: Principal
  request: ChatRequest
  attempts: Attempt[]
  signal: AbortSignal
  abort: AbortController
  requestId: string
  hold: Hold
  tags?: GenerationTags
  /** The host's policies (docs/policies.md#policy-hooks): they filter the answer's text. */
  policy?: PolicyRun
}
