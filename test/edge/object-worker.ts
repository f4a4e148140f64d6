// The Worker the engine's conformance runs use (test/helpers/durable-objects.ts): ModelGatewayObject bound as
// MODEL_GATEWAY, and one route passing each call, `POST /<object name>`, to that object as the gateway's client would.
import { ModelGatewayObject } from '../../src/edge'

export { ModelGatewayObject }

interface Env {
  MODEL_GATEWAY: { idFromName(name: string): unknown; get(id: unknown): { fetch(request: Request): Promise<Response> } }
}

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    const name = decodeURIComponent(new URL(request.url).pathname.slice(1))
    return env.MODEL_GATEWAY.get(env.MODEL_GATEWAY.idFromName(name)).fetch(request)
  },
}
