import type { InProcessCallOptions, OpenAIShapedClient } from '../../src/ai-sdk/client'
import { type ErrorStatus, GatewayError } from '../../src/errors'

/**
 * The AI SDK provider's client (src/ai-sdk/client.ts) over HTTP: the gateway's chat and embeddings routes called with
 * a key, answering what the in-process client answers (the completion, an async iterable of chunks, the gateway's
 * error as a GatewayError). For tests of the provider until they run on the in-process client too.
 */
export function httpClient(gatewayUrl: string, key: string): OpenAIShapedClient & { calls: { path: string; body: Record<string, unknown> }[] } {
  const calls: { path: string; body: Record<string, unknown> }[] = []
  const post = async (path: string, body: Record<string, unknown>, options: InProcessCallOptions = {}) => {
    calls.push({ path, body })
    const res = await fetch(`${gatewayUrl}/api/v1${path}`, {
      method: 'POST',
      headers: { ...options.headers, authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: options.signal,
    })
    if (!res.ok) {
      const envelope = (await res.json().catch(() => ({}))) as { error?: { message?: string; param?: string; metadata?: Record<string, unknown> } }
      throw new GatewayError(res.status as ErrorStatus, envelope.error?.message ?? res.statusText, {
        param: envelope.error?.param,
        metadata: envelope.error?.metadata,
      })
    }
    return res
  }
  return {
    calls,
    chat: {
      completions: {
        async create(body, options) {
          const res = await post('/chat/completions', body, options)
          return body.stream === true ? sseChunks(res) : res.json()
        },
      },
    },
    embeddings: {
      async create(body, options) {
        return (await post('/embeddings', body, options)).json()
      },
    },
  }
}

/** The JSON chunks of an SSE answer as they arrive; leaving the loop early cancels the body (the gateway sees the client go). */
async function* sseChunks(res: Response): AsyncGenerator<any> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      buffer += value
      let end = buffer.indexOf('\n\n')
      while (end >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        end = buffer.indexOf('\n\n')
        for (const line of block.split('\n')) {
          if (!line.startsWith('data: ')) continue
          const data = line.slice(6)
          if (data === '[DONE]') return
          yield JSON.parse(data)
        }
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined)
  }
}
