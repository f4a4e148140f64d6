import { readFileSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { FetchError, ofetch } from 'ofetch'
import { CliError } from './errors'
import { displayPath } from './paths'

/** Limits of reading a price table. */
export interface SourceLimits {
  /** The whole download (connect, headers and body) must end within this long. */
  timeoutMs: number
  /** Larger bodies and files are refused. */
  maxBytes: number
  /** Told now and then while a download goes on (bytes so far). */
  progress?: (bytes: number) => void
}

/** LiteLLM's table is about 1.6 MB and OpenRouter's list about 0.5 MB (2026): 50 MB leaves room without reading anything. */
export const DEFAULT_SOURCE_LIMITS: SourceLimits = { timeoutMs: 60_000, maxBytes: 50 * 1024 * 1024 }

/** True for an http(s) URL, which is fetched; anything else is a file path. */
export const isUrl = (from: string): boolean => /^https?:\/\//i.test(from)

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`

// The reason of a failed fetch a person can act on: the status, or the network error at the bottom of the causes.
function fetchFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof FetchError && error.status) return `the server answered ${error.status}${error.statusText ? ` ${error.statusText}` : ''}`
  let cause: unknown = error
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause
  const code = (cause as NodeJS.ErrnoException)?.code
  if ((cause as Error)?.name === 'TimeoutError' || (cause as Error)?.name === 'AbortError') return `no complete answer within ${timeoutMs / 1000} s`
  return code ? `${code} (${(cause as Error).message})` : ((cause as Error)?.message ?? String(cause))
}

/** Reads a stream to its end, refusing more than `maxBytes`. */
async function readLimited(body: ReadableStream<Uint8Array>, limits: SourceLimits, from: string): Promise<string> {
  const chunks: Uint8Array[] = []
  let bytes = 0
  let told = 0
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength
    if (bytes > limits.maxBytes) throw new CliError(`${from}: larger than ${mb(limits.maxBytes)}: not read`)
    chunks.push(chunk)
    if (limits.progress && bytes - told >= 1024 * 1024) limits.progress((told = bytes))
  }
  return Buffer.concat(chunks).toString('utf8')
}

// ofetch rather than bare fetch: a FetchError that carries the status and the URL, one retry of a 5xx or a dropped
// connection, and the body as a stream so that the size limit holds while it arrives.
async function download(url: string, limits: SourceLimits): Promise<string> {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(Object.assign(new Error('timeout'), { name: 'TimeoutError' })), limits.timeoutMs)
  try {
    const res = await ofetch.raw(url, { responseType: 'stream', signal: controller.signal, retry: 1, retryDelay: 500, headers: { accept: 'application/json' } })
    const length = Number(res.headers.get('content-length'))
    if (length > limits.maxBytes) throw new CliError(`${url}: ${mb(length)}, larger than ${mb(limits.maxBytes)}: not read`)
    if (!res._data) throw new CliError(`${url}: the answer has no body`)
    return await readLimited(res._data as ReadableStream<Uint8Array>, limits, url)
  } catch (error) {
    if (error instanceof CliError) throw error
    throw new CliError(`could not fetch ${url}: ${fetchFailure(error, limits.timeoutMs)}`)
  } finally {
    clearTimeout(timer)
    controller.abort()
  }
}

/** Reads the JSON of `--from`: an http(s) URL (fetched with ofetch) or a file; a clear CliError for each failure. */
export async function readSource(from: string, limits: SourceLimits = DEFAULT_SOURCE_LIMITS, cwd = process.cwd()): Promise<unknown> {
  let body: string
  let name = from
  if (isUrl(from)) body = await download(from, limits)
  else {
    const file = resolve(cwd, from)
    name = displayPath(file, cwd)
    try {
      const size = statSync(file).size
      if (size > limits.maxBytes) throw new CliError(`${name}: ${mb(size)}, larger than ${mb(limits.maxBytes)}: not read`)
      body = readFileSync(file, 'utf8')
    } catch (error) {
      if (error instanceof CliError) throw error
      const code = (error as NodeJS.ErrnoException).code
      throw new CliError(`cannot read ${name}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : (error as Error).message}`)
    }
  }
  try {
    return JSON.parse(body)
  } catch (error) {
    throw new CliError(`${name}: not JSON (${(error as Error).message})`)
  }
}
