import type { GenerationTags } from '../http/attribution'
import type { ImagesRequest } from '../schemas/images'
import type { Principal } from '../stores/account-types'

/** What serveImages takes: the caller, the validated request, the client's signal, the request id and the generation's tags. */
export interface ImagesInput {
  principal: Principal
  request: ImagesRequest
  signal: AbortSignal
  requestId: string
  tags?: GenerationTags
}
