import { GatewayError } from '../errors'
import { type DurableObjectOp, decodeCall, encodeCall } from './durable-object-protocol'

/** The part of a Durable Object namespace binding (`env.GATEWAY`) the gateway uses. */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown
  get(id: never): { fetch(input: string, init: { method: string; body: string }): Promise<Response> }
}

/** One operation on one object: its answer, or a GatewayError (503: a storage outage). */
export type ObjectCall = <T>(op: DurableObjectOp, ...args: unknown[]) => Promise<T>

/** The calls to the object of `namespace` named `name` (docs/edge.md#the-durable-object-engine): one request per operation. */
export function objectCall(namespace: DurableObjectNamespaceLike, name: string): ObjectCall {
  const id = namespace.idFromName(name)
  return async (op, ...args) => {
    // A stub per call: workerd ties a stub's I/O to the request that made it.
    const stub = namespace.get(id as never)
    let res: Response
    try {
      res = await stub.fetch('https://model-gateway.do/', { method: 'POST', body: encodeCall({ op, args }) })
    } catch (error) {
      throw new GatewayError(503, 'the Durable Object did not answer', { cause: error })
    }
    const answer = decodeCall<{ result?: unknown; error?: string }>(await res.text())
    if (!res.ok) throw new GatewayError(503, `the Durable Object failed: ${answer.error ?? res.status}`)
    return answer.result as never
  }
}
