import { GatewayError } from '../../src/index'
import type { CallOptions, UpstreamChunk } from '../../src/index'

/** Call options for a test: a fresh signal, a 2 s timeout, and whatever the test overrides. */
export const callOptions = (overrides: Partial<CallOptions> = {}): CallOptions => ({ signal: new AbortController().signal, timeoutMs: 2000, ...overrides })

/** The error a promise rejects with; fails the test when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise
  } catch (error) {
    return error as GatewayError
  }
  throw new Error('expected the call to fail, and it succeeded')
}

/** Every chunk of a stream, and the error that ended it (undefined when it ended well). */
export async function drain(stream: AsyncIterable<UpstreamChunk>): Promise<{ chunks: UpstreamChunk[]; error?: GatewayError }> {
  const chunks: UpstreamChunk[] = []
  try {
    for await (const chunk of stream) chunks.push(chunk)
  } catch (error) {
    return { chunks, error: error as GatewayError }
  }
  return { chunks }
}

/** The text of a stream: every `delta.content` joined. */
export const streamedText = (chunks: UpstreamChunk[]): string => chunks.map((c) => (c.choices[0]?.delta?.content as string | undefined) ?? '').join('')

/** The streamed arguments of tool call `index`, joined. */
export const streamedArguments = (chunks: UpstreamChunk[], index = 0): string =>
  chunks
    .flatMap((c) => (c.choices[0]?.delta?.tool_calls as { index: number; function?: { arguments?: string } }[] | undefined) ?? [])
    .filter((t) => t.index === index)
    .map((t) => t.function?.arguments ?? '')
    .join('')

/** The finish reasons a stream gave, in order (nulls left out). */
export const finishReasons = (chunks: UpstreamChunk[]): unknown[] =>
  chunks.flatMap((c) => c.choices.map((choice) => choice.finish_reason)).filter((reason) => reason != null)

/** Milliseconds a promise took to settle, whichever way. */
export async function timed(promise: Promise<unknown>): Promise<number> {
  const started = performance.now()
  await promise.catch(() => undefined)
  return performance.now() - started
}

export { GatewayError }
