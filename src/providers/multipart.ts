import { randomBytes, toHex } from '../crypto/hash'

/** One part of a multipart/form-data body: a text field, or a file with its name and media type. */
export type MultipartField = { name: string; value: string } | { name: string; filename: string; contentType: string; data: Uint8Array }

const encoder = new TextEncoder()
// As the HTML standard encodes names in Content-Disposition: quote, CR and LF percent-encoded.
const quoted = (text: string) => `"${text.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')}"`

/**
 * Serializes fields as a multipart/form-data body (RFC 7578) with a random boundary that occurs in no part. Returns
 * the bytes and the Content-Type that names the boundary.
 */
export function encodeMultipart(fields: MultipartField[]): { body: Uint8Array; contentType: string } {
  const payloads = fields.map((field) => ('data' in field ? field.data : encoder.encode(field.value)))
  let boundary: string
  do boundary = `----model-gateway-${toHex(randomBytes(16))}`
  while (payloads.some((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength).includes(boundary)))

  const pieces: Uint8Array[] = []
  fields.forEach((field, i) => {
    const disposition = `form-data; name=${quoted(field.name)}${'data' in field ? `; filename=${quoted(field.filename)}` : ''}`
    const type = 'data' in field ? `\r\nContent-Type: ${field.contentType}` : ''
    pieces.push(encoder.encode(`--${boundary}\r\nContent-Disposition: ${disposition}${type}\r\n\r\n`), payloads[i], encoder.encode('\r\n'))
  })
  pieces.push(encoder.encode(`--${boundary}--\r\n`))
  const body = Buffer.concat(pieces)
  return { body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength), contentType: `multipart/form-data; boundary=${boundary}` }
}
