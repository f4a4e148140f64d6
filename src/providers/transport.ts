import { ofetch } from 'ofetch'
import type { UpstreamRequest, UpstreamResponse } from './http'
import { upstreamError } from './upstream-error'

/** Sends one upstream request: resolves with the answer's head, rejects with a GatewayError (timeout, unreachable, aborted). */
export type Transport = (url: string, init: UpstreamRequest) => Promise<UpstreamResponse>

let loaded: Promise<Transport> | undefined

/**
 * Sends the calls of every provider without its own transport through `transport` from now on, in this isolate or
 * process: the edge entry picks `fetchTransport` (docs/edge.md#what-the-edge-entry-leaves-out).
 */
export function setDefaultTransport(transport: Transport): void {
  loaded = Promise.resolve(transport)
}

/**
 * The hot path's transport (docs/providers.md#transport): node:http with keep-alive pools (src/providers/http.ts)
 * where the runtime has it (Node, Bun, Deno), else `fetchTransport`. Loaded once, on the first call.
 */
export function loadTransport(): Promise<Transport> {
  loaded ??= (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node
    ? import('./http').then((http) => http.upstreamFetch).catch(() => fetchTransport)
    : Promise.resolve(fetchTransport)
  return loaded
}

/**
 * The portable transport: ofetch over the runtime's fetch, with the same contract as node:http's (no byte for
 * `timeoutMs` fails the call, while waiting and while streaming; the caller's signal aborts it; failures are
 * GatewayErrors). Used where node:http is missing (edge runtimes).
 */
export const fetchTransport: Transport = async (url, init) => {
  if (init.signal.aborted) throw abortedError(init)
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  const idle = () => {
    clearTimeout(timer)
    timer = setTimeout(() => controller.abort(upstreamError(init.provider, 'timeout', `no answer within ${init.timeoutMs} ms`)), init.timeoutMs)
  }
  const onAbort = () => controller.abort(abortedError(init))
  init.signal.addEventListener('abort', onAbort, { once: true })
  const done = () => {
    clearTimeout(timer)
    init.signal.removeEventListener('abort', onAbort)
  }
  idle()
  let res: Response
  try {
    res = await ofetch.raw(url, {
      method: init.method,
      headers: init.headers,
      body: init.body as BodyInit | undefined,
      signal: controller.signal,
      retry: false,
      ignoreResponseError: true,
      responseType: 'stream',
    })
  } catch (error) {
    done()
    throw failureOf(error, controller.signal, init)
  }
  const headers: Record<string, string> = {}
  res.headers.forEach((value, name) => {
    headers[name] = value
  })
  async function* body(): AsyncIterable<Uint8Array> {
    const reader = res.body?.getReader()
    if (!reader) return done()
    try {
      for (;;) {
        idle()
        const { value, done: finished } = await reader.read()
        if (finished) return
        yield value
      }
    } catch (error) {
      throw failureOf(error, controller.signal, init)
    } finally {
      done()
      reader.releaseLock()
      if (!controller.signal.aborted) controller.abort()
    }
  }
  const stream = body()
  return {
    status: res.status,
    headers,
    body: stream,
    async text() {
      const decoder = new TextDecoder()
      let text = ''
      for await (const chunk of stream) text += decoder.decode(chunk, { stream: true })
      return text + decoder.decode()
    },
  }
}

function abortedError(init: UpstreamRequest): Error {
  const reason = init.signal.reason
  return reason instanceof Error && reason.name === 'GatewayError' ? reason : Object.assign(new Error('aborted'), { name: 'AbortError' })
}

// The abort reason when the call was aborted (timeout, the caller), else a connection failure.
function failureOf(error: unknown, signal: AbortSignal, init: UpstreamRequest): Error {
  if (signal.aborted && signal.reason instanceof Error) return signal.reason
  if (error instanceof Error && error.name === 'GatewayError') return error
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause
  return upstreamError(init.provider, 'provider_unavailable', `${cause?.code ?? 'error'}: ${cause?.message ?? (error as Error)?.message ?? String(error)}`, {
    cause: error,
    connection: true,
  })
}
