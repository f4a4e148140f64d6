import type { GatewayError } from '../errors'
import { ofetch } from 'ofetch'
import type { CallOptions, UpstreamSource } from '../contracts'
import { parseUpstreamJson, upstreamError } from './upstream-error'

/**
 * A `GET` of JSON off the hot path (key checks, model discovery) through ofetch (docs/providers.md#transport): the
 * call's signal and timeout, no retry (the check reports what it saw), a failed status mapped by `fail`.
 */
export async function offPathGetJson(
  url: string,
  options: {
    headers: Record<string, string>
    call: CallOptions
    provider: UpstreamSource
    fail: (status: number, text: string, headers: Record<string, string>, call: CallOptions) => GatewayError
  },
): Promise<unknown> {
  const { call, provider } = options
  const signal = AbortSignal.any([call.signal, AbortSignal.timeout(call.timeoutMs)])
  let res: Response & { _data?: string }
  try {
    res = await ofetch.raw<string, 'text'>(url, {
      method: 'GET',
      headers: { accept: 'application/json', ...options.headers },
      signal,
      retry: false,
      ignoreResponseError: true,
      responseType: 'text',
    })
  } catch (error) {
    const reason = signal.reason as Error | undefined
    if (call.signal.aborted && reason?.name === 'GatewayError') throw reason
    if (!call.signal.aborted && reason?.name === 'TimeoutError') throw upstreamError(provider, 'timeout', `no answer within ${call.timeoutMs} ms`)
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    throw upstreamError(provider, 'provider_unavailable', `${cause?.code ?? 'error'}: ${cause?.message ?? (error as Error).message}`, {
      cause: error,
      connection: true,
    })
  }
  const text = res._data ?? ''
  const headers: Record<string, string> = {}
  res.headers.forEach((value, name) => {
    headers[name] = value
  })
  if (res.status < 200 || res.status >= 300) throw options.fail(res.status, text, headers, call)
  return parseUpstreamJson(provider, text)
}
