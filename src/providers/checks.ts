import type { ProviderCheck } from '../contracts'
import { isUpstreamError } from './upstream-error'

/** The human message of an upstream error body (OpenAI's `{ error: { message } }` and common variants). */
export function errorMessageOf(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: string } | string; message?: string; detail?: string }
    const message = typeof body.error === 'string' ? body.error : (body.error?.message ?? body.message ?? body.detail)
    if (typeof message === 'string') return message
  } catch {
    // not JSON: keep the text
  }
  return text.slice(0, 500)
}

/** Runs one check, timing it and turning a failure into a helpful message. */
export async function timedCheck(target: string, run: () => Promise<string>): Promise<ProviderCheck> {
  const started = performance.now()
  try {
    const message = await run()
    return { target, ok: true, latency_ms: Math.round(performance.now() - started), message }
  } catch (error) {
    const kind = isUpstreamError(error) ? error.kind : undefined
    const hint =
      kind === 'authentication'
        ? 'the key was rejected'
        : kind === 'timeout'
          ? 'no answer in time'
          : kind === 'rate_limit_exceeded'
            ? 'rate limited, try later'
            : (error as Error).message
    return { target, ok: false, latency_ms: Math.round(performance.now() - started), message: hint }
  }
}
