// The route handler of `<basePath>/**` in the app's Nitro server (registered by adapters/nuxt.ts): Nitro runs h3 v1,
// the gateway h3 v2, so each request crosses as a web Request and the answer comes back as a web Response, streamed.
import type { Gateway } from 'model-gateway'
import { useModelGateway } from './gateway'
import { unavailable } from './unavailable'
import { rememberNitroEvent } from './session'
import { type NitroEvent, toWebRequest } from './web-request'

/**
 * An h3 v1 event handler, marked as h3's `defineEventHandler` marks one. Nitro types the route from it: the answers
 * are the gateway's JSON, of many shapes, so `unknown` (`$fetch<T>('/api/v1/…')` says which).
 */
export interface GatewayRouteHandler {
  (event: NitroEvent): Promise<unknown>
  readonly __is_handler__: true
}

/** Serves a request with the app's gateway, or answers the error envelope while the gateway cannot be created. */
async function serve(event: NitroEvent): Promise<Response> {
  let gateway: Gateway
  try {
    gateway = await useModelGateway(event)
  } catch (error) {
    return unavailable(error)
  }
  return gateway.fetch(rememberNitroEvent(toWebRequest(event), event))
}

const handler: GatewayRouteHandler = Object.assign(serve, { __is_handler__: true as const })
export default handler
