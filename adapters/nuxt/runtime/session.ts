// The app's own signed-in users in the gateway (docs/first-party.md#nuxt): the Nitro event behind a request the
// gateway serves (for the `session.user` function, which gets the gateway's h3 v2 event), and the in-process client
// of an event's session user (useGatewayClient).
import type { GatewayClient } from 'model-gateway'
import { useModelGateway } from './gateway'
import type { NitroEvent } from './web-request'

const nitroEvents = new WeakMap<Request, NitroEvent>()

/** Notes the Nitro event a web Request was made from, for nitroEventOf. */
export function rememberNitroEvent(request: Request, event: NitroEvent): Request {
  nitroEvents.set(request, event)
  return request
}

/**
 * The app's Nitro event (h3 v1) behind the gateway's event: what the app's session helpers take, e.g.
 * `session: { user: async (event) => (await getUserSession(nitroEventOf(event)!)).user }` (nuxt-auth-utils).
 */
export function nitroEventOf(event: { req: Request }): NitroEvent | undefined {
  return nitroEvents.get(event.req)
}

/**
 * The in-process client of the event's signed-in user (the `session` option says who; a key the request sends wins):
 * `const ai = await useGatewayClient(event); await ai.chat.completions.create({ … })`, billed to that user.
 */
export async function useGatewayClient(event: NitroEvent): Promise<GatewayClient> {
  const gateway = await useModelGateway(event)
  const req = event.node.req
  const encrypted = (req.socket as { encrypted?: boolean } | undefined)?.encrypted
  const protocol = req.headers['x-forwarded-proto'] === 'https' || encrypted ? 'https' : 'http'
  // Only who is asking matters here: the URL and headers, not the body (the app's route reads that).
  const request = new Request(new URL(req.originalUrl || event.path, `${protocol}://${req.headers.host || 'localhost'}`), { headers: event.headers })
  return gateway.client({ request: rememberNitroEvent(request, event) })
}
