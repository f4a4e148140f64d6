// Providers the adapter contract (contract.ts) expects the gateway under test to serve. Type imports only, so that
// an app built from the published package (the Nuxt fixture) can import this file too: pass it `demo()` from
// wherever that app gets model-gateway.
import type { Provider } from '../../src/index'

/** The slow model of the contract: demo/echo with a pause before every streamed chunk. */
export const SLOW_ECHO_MODEL = 'contract/slow-echo'

/** The pause before each streamed chunk of the slow model. */
export const SLOW_ECHO_DELAY_MS = 150

/**
 * demo/echo, slowed down: streamed chunks come SLOW_ECHO_DELAY_MS apart, so that an adapter that buffers the
 * response (instead of streaming it) shows in the arrival times. Serve it next to `demo()`.
 */
export function slowEcho(demoProvider: Provider, delayMs = SLOW_ECHO_DELAY_MS): Provider {
  const [echo] = demoProvider.models
  return {
    ...demoProvider,
    slug: 'contract-slow',
    name: 'Contract (slow echo)',
    models: [{ ...echo, id: SLOW_ECHO_MODEL, upstreamId: echo.upstreamId ?? 'echo', name: 'Contract: slow echo' }],
    async chatStream(request, options) {
      const chunks = await demoProvider.chatStream(request, options)
      return (async function* () {
        for await (const chunk of chunks) {
          await new Promise((resolve) => setTimeout(resolve, delayMs))
          if (options.signal?.aborted) return
          yield chunk
        }
      })()
    },
  }
}
