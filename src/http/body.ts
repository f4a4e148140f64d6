import type { H3Event } from 'h3'
import { GatewayError, invalidRequest } from '../errors'

/** Default body limit (decisions.md §10): 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024

const tooLarge = (limit: number) => new GatewayError(413, `Request body is larger than ${limit} bytes`)

/** Reads the raw body up to `limit` bytes: 413 beyond, by Content-Length or while streaming. */
export async function readBodyBytes(event: H3Event, limit: number): Promise<Uint8Array | undefined> {
  const declared = event.req.headers.get('content-length')
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit)
  const stream = event.req.body
  if (!stream) return undefined
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = stream.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => undefined)
      throw tooLarge(limit)
    }
    chunks.push(value)
  }
  if (size === 0) return undefined
  if (chunks.length === 1) return chunks[0]
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

/** True for a JSON media type (application/json, application/*+json). */
export function isJsonMediaType(contentType: string): boolean {
  const type = contentType.split(';')[0].trim().toLowerCase()
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'))
}

/** Reads and parses a JSON body: 415 for another media type, 413 beyond `limit`, 400 for invalid JSON; undefined when empty. */
export async function readJsonBody(event: H3Event, limit: number = DEFAULT_BODY_LIMIT): Promise<unknown> {
  const contentType = event.req.headers.get('content-type')
  if (contentType && !isJsonMediaType(contentType)) {
    throw new GatewayError(415, 'Content-Type must be application/json')
  }
  const bytes = await readBodyBytes(event, limit)
  if (!bytes) return undefined
  try {
    return JSON.parse(new TextDecoder().decode(bytes))
  } catch {
    throw invalidRequest('Request body is not valid JSON')
  }
}
