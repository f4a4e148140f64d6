import { ModelGatewayConfigError } from './config-error'
import { logger } from './logger'
import { randomHex } from './random'

/** The answer of the API while the gateway cannot be created: the error envelope, naming the problem when it is ours. */
export function unavailable(error: unknown): Response {
  logger.error(`the gateway could not be created: ${error && (error as Error).message}`)
  const ours = error instanceof ModelGatewayConfigError || (error instanceof TypeError && /^model-gateway: /.test(error.message))
  const message = ours ? error.message : 'The gateway could not be created; the server log says why'
  return new Response(JSON.stringify({ error: { code: 500, type: 'internal_error', message } }), {
    status: 500,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': `req_${randomHex(12)}` },
  })
}
