import type { GenerationTags } from '../http/attribution'
import type { EmbeddingsRequest } from '../schemas/embeddings'
import type { Principal } from '../stores/account-types'

/** What serveEmbeddings takes: the caller, the validated request, the client's signal, the request id and the generation's tags. */
export interface EmbeddingsInput {
  principal: Principal
  request: EmbeddingsRequest
  signal: AbortSignal
  requestId: string
  tags?: GenerationTags
}
