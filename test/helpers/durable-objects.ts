import { Miniflare } from 'miniflare'
import { afterAll, beforeAll } from 'vitest'
import type { DurableObjectNamespaceLike } from '../../src/edge'
import { bundleWorker } from './worker-bundle'

/**
 * One workerd (through Miniflare) for a test file, running ModelGatewayObject (test/edge/object-worker.ts), and a
 * Durable Object namespace in Node whose every call is one request to that object in workerd: the engine's client
 * (durableObjectStorage, durableObjectEngine) runs here, the engine itself (the object over its own storage) there.
 * Returns a getter for the namespace, valid between the file's beforeAll and afterAll.
 */
export function useDurableObjects(): () => DurableObjectNamespaceLike & { calls: number } {
  let mf: Miniflare | undefined
  let namespace: (DurableObjectNamespaceLike & { calls: number }) | undefined
  beforeAll(async () => {
    const { code } = await bundleWorker('test/edge/object-worker.ts')
    const started = new Miniflare({
      modules: [{ type: 'ESModule', path: 'worker.mjs', contents: code }],
      compatibilityDate: '2025-09-01',
      compatibilityFlags: ['nodejs_compat'],
      durableObjects: { MODEL_GATEWAY: 'ModelGatewayObject' },
    })
    const url = await started.ready
    mf = started
    // At most 64 calls in flight over Miniflare's connections to workerd (hundreds at once end in EPIPE); the rest wait.
    let inFlight = 0
    const waiting: (() => void)[] = []
    const ns = {
      calls: 0,
      idFromName: (name: string) => name,
      get: (id: never) => ({
        async fetch(_input: string, init: { method: string; body: string }): Promise<Response> {
          ns.calls++
          if (inFlight >= 64) await new Promise<void>((resolve) => waiting.push(resolve))
          inFlight++
          try {
            const res = await fetch(new URL(encodeURIComponent(id), url), init)
            return new Response(await res.text(), { status: res.status })
          } finally {
            inFlight--
            waiting.shift()?.()
          }
        },
      }),
    }
    namespace = ns
  }, 60_000)
  afterAll(async () => {
    await mf?.dispose()
  })
  return () => {
    if (!namespace) throw new Error('useDurableObjects: workerd is not started (call it at the top of a describe)')
    return namespace
  }
}
