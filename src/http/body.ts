import type { IncomingMessage } from 'node:http'
import type { H3Event } from 'h3'
import { GatewayError, invalidRequest } from '../errors'
import { collectBytes } from './collect'
import { exceedsJsonDepth, MAX_JSON_DEPTH } from './json-depth'

export { MAX_JSON_DEPTH } from './json-depth'

/** Default body limit (docs/limits.md#body-size): 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024

// One decoder for every whole body (decode without `stream` keeps no state between calls); it drops a leading BOM.
const utf8 = new TextDecoder()

const tooLarge = (limit: number) => new GatewayError(413, `Request body is larger than ${limit} bytes`)

/** Reads the raw body up to `limit` bytes: 413 beyond, by Content-Length or while streaming. */
export async function readBodyBytes(event: H3Event, limit: number): Promise<Uint8Array | undefined> {
  const declared = event.req.headers.get('content-length')
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit)
  // On Node, read the IncomingMessage itself: the web stream around it costs more than the rest of the read.
  const node = event.runtime?.node?.req as NodeBodySource | undefined
  if (node && !event.req.bodyUsed && !node.readableEnded && !node.destroyed && !node.readableDidRead && !Buffer.isBuffer(node.rawBody)) {
    return collectBytes(node, { limit, tooLarge: () => tooLarge(limit), failed: incomplete })
  }
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
  return joinChunks(chunks, size)
}

/** A Node request whose body nobody has read yet (`rawBody`: what some frameworks leave after reading it). */
type NodeBodySource = IncomingMessage & { rawBody?: unknown }

const incomplete = (cause: unknown) => new GatewayError(400, 'The request body ended before it was complete', { cause })

function joinChunks(chunks: Uint8Array[], size: number): Uint8Array | undefined {
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

/**
 * Reads and parses a JSON body: 415 for another media type, 413 beyond `limit`, 400 for invalid JSON or for nesting
 * deeper than MAX_JSON_DEPTH (checked before parsing); undefined when empty.
 */
export async function readJsonBody(event: H3Event, limit: number = DEFAULT_BODY_LIMIT): Promise<unknown> {
  const contentType = event.req.headers.get('content-type')
  if (contentType && !isJsonMediaType(contentType)) {
    throw new GatewayError(415, 'Content-Type must be application/json')
  }
  const bytes = await readBodyBytes(event, limit)
  if (!bytes) return undefined
  const text = utf8.decode(bytes)
  if (exceedsJsonDepth(text)) throw invalidRequest(`body: JSON nested deeper than ${MAX_JSON_DEPTH} levels`)
  try {
    return JSON.parse(text)
  } catch {
    throw invalidRequest('Request body is not valid JSON')
  }
}

/** A file of a multipart/form-data body. */
export class FormFile {
  constructor(
    /** The part's `filename` (may be empty). */
    readonly filename: string,
    /** The part's Content-Type, `application/octet-stream` when it has none. */
    readonly type: string,
    readonly data: Uint8Array,
  ) {}

  get size(): number {
    return this.data.byteLength
  }
}

/** The fields of a multipart/form-data body: text fields as strings, files as FormFile; a repeated name gives an array. */
export type FormFields = Record<string, string | FormFile | (string | FormFile)[]>

/** True for multipart/form-data. */
export function isMultipartFormData(contentType: string): boolean {
  return contentType.split(';')[0].trim().toLowerCase() === 'multipart/form-data'
}

const MAX_PARTS = 1000
const MAX_PART_HEADER = 16 * 1024
const CRLF2 = Buffer.from('\r\n\r\n')
const malformed = (why: string) => invalidRequest(`body: malformed multipart/form-data (${why})`)

// What the HTML standard escapes in names and filenames of form-data: quote, CR and LF.
const unescapeName = (text: string) => text.replace(/%22/gi, '"').replace(/%0D/gi, '\r').replace(/%0A/gi, '\n')

function dispositionParams(value: string): Record<string, string> {
  const params: Record<string, string> = {}
  const re = /;\s*([^=;\s]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g
  for (let match: RegExpExecArray | null; (match = re.exec(value)); ) {
    const name = match[1].toLowerCase()
    params[name] = unescapeName(match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : match[3].trim())
  }
  if (params['filename*']) {
    const extended = /^[^']*'[^']*'(.*)$/.exec(params['filename*'])
    try {
      if (extended) params.filename = decodeURIComponent(extended[1])
    } catch {
      // keep the plain filename
    }
  }
  return params
}

/**
 * Parses a multipart/form-data body (RFC 7578, RFC 2046 §5.1.1): the boundary from the Content-Type, a preamble and
 * an epilogue ignored, each part's Content-Disposition (`name`, `filename`, `filename*`) and Content-Type. 400 for a
 * body that does not follow the format.
 */
export function parseMultipart(bytes: Uint8Array, contentType: string): FormFields {
  const boundary = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(contentType)
  const marker = boundary?.[1] ?? boundary?.[2]
  if (!marker || marker.length > 200) throw malformed('no boundary in Content-Type')
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const dashBoundary = Buffer.from(`--${marker}`)
  const delimiter = Buffer.from(`\r\n--${marker}`)
  let at: number
  if (body.subarray(0, dashBoundary.length).equals(dashBoundary)) at = dashBoundary.length
  else {
    const first = body.indexOf(delimiter)
    if (first === -1) throw malformed('the boundary does not occur in the body')
    at = first + delimiter.length
  }
  const fields: FormFields = {}
  const decoder = new TextDecoder()
  for (let parts = 0; ; parts++) {
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return fields // the close delimiter
    if (parts === MAX_PARTS) throw malformed(`more than ${MAX_PARTS} parts`)
    while (body[at] === 0x20 || body[at] === 0x09) at++ // transport padding
    if (body[at] !== 0x0d || body[at + 1] !== 0x0a) throw malformed('a boundary line does not end with CRLF')
    at += 2
    const headerEnd = body[at] === 0x0d && body[at + 1] === 0x0a ? at - 2 : body.indexOf(CRLF2, at)
    if (headerEnd === -1 || headerEnd - at > MAX_PART_HEADER) throw malformed('a part has no end of headers')
    const headers: Record<string, string> = {}
    if (headerEnd > at) {
      for (const line of decoder.decode(body.subarray(at, headerEnd)).split('\r\n')) {
        const colon = line.indexOf(':')
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
      }
    }
    const start = headerEnd + 4
    const end = body.indexOf(delimiter, start)
    if (end === -1) throw malformed('the last part is not closed by the boundary')
    at = end + delimiter.length
    const disposition = headers['content-disposition'] ?? ''
    if (!/^form-data\s*(;|$)/i.test(disposition)) throw malformed('a part is not form-data')
    const params = dispositionParams(disposition)
    if (params.name === undefined) throw malformed('a part has no name')
    const data = body.subarray(start, end)
    const value =
      params.filename !== undefined
        ? new FormFile(params.filename, headers['content-type'] || 'application/octet-stream', new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
        : decoder.decode(data)
    const existing = fields[params.name]
    fields[params.name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value]
  }
}

/** A request body: parsed JSON, or the fields of a multipart/form-data upload. */
export type RequestBody = { kind: 'json'; value: unknown } | { kind: 'form'; value: FormFields }

/**
 * Reads a JSON body, or, when `multipart` is accepted and the Content-Type says so, a multipart/form-data upload:
 * 415 for another media type, 413 beyond `limit`, 400 for an unreadable body.
 */
export async function readRequestBody(event: H3Event, limit: number, accept: { multipart?: boolean } = {}): Promise<RequestBody> {
  const contentType = event.req.headers.get('content-type')
  if (accept.multipart && contentType && isMultipartFormData(contentType)) {
    const bytes = await readBodyBytes(event, limit)
    if (!bytes) throw malformed('the body is empty')
    return { kind: 'form', value: parseMultipart(bytes, contentType) }
  }
  if (accept.multipart && contentType && !isJsonMediaType(contentType)) {
    throw new GatewayError(415, 'Content-Type must be application/json or multipart/form-data')
  }
  return { kind: 'json', value: await readJsonBody(event, limit) }
}
