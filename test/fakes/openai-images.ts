import type { IncomingMessage, ServerResponse } from 'node:http'
import { deflateSync } from 'node:zlib'
import { answeredError, behaviourOf, type ErrorTable } from './behaviour'
import type { FakeOpenAI } from './openai'

/**
 * `POST /v1/images/generations` of the fake OpenAI upstream, as OpenAI's Images API reference describes it for its GPT
 * Image models: JSON `{ model, prompt, n, size, quality, background, output_format, output_compression, moderation,
 * user }`; answers `{ created, background, data: [{ b64_json }], output_format, quality, size, usage }`, the images real
 * PNGs (2×2 pixels, coloured by the prompt and the image's index: `fakeImage`), `usage` as gpt-image-1 reports it:
 * `input_tokens` (a text token per 4 characters of the prompt, at least 1) with `input_tokens_details`, and
 * `output_tokens`: each image's image tokens by quality and size (`FAKE_IMAGE_TOKENS`, OpenAI's image generation
 * guide; `auto` picks `medium` and `1024x1024`). Refused as OpenAI refuses them: no prompt, `n` outside 1–10, an
 * unknown size or quality.
 *
 * The model name (or `script`, `keyModes`, `promptModes` on the prompt, `modes`, as for chat) picks a behaviour: the
 * chat errors (`fail-400`, `fail-401`, `fail-429`, `fail-500`, `fail-503`), `fail-reset`, `hang`, `fail-badjson`,
 * `fail-malformed` (`data` is not a list), `fail-url` (a `url` instead of `b64_json`), `slow` (waits `slowMs`),
 * `no-usage` (no `usage` field, as DALL·E models and some compatible hosts answer).
 */
export const FAKE_IMAGE_TOKENS: Record<string, Record<string, number>> = {
  low: { '1024x1024': 272, '1024x1536': 408, '1536x1024': 400 },
  medium: { '1024x1024': 1056, '1024x1536': 1584, '1536x1024': 1568 },
  high: { '1024x1024': 4160, '1024x1536': 6240, '1536x1024': 6208 },
}

export interface ImagesContext {
  req: IncomingMessage
  res: ServerResponse
  body: any
  bearer: string
  errors: ErrorTable
}

const invalid = (message: string, param: string | null = null, code: string | null = null) => ({
  error: { message, type: 'invalid_request_error', param, code },
})
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
const crc32 = (bytes: Buffer) => {
  let c = 0xffffffff
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}
const chunk = (type: string, data: Buffer) => {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}

/** The PNG the fake answers for a prompt's image `index`: 2×2 RGB pixels of a colour derived from both. */
export function fakeImage(prompt: string, index: number): Buffer {
  const seed = [...`${index}:${prompt}`].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7)
  const rgb = [seed & 0xff, (seed >>> 8) & 0xff, (seed >>> 16) & 0xff]
  const header = Buffer.alloc(13)
  header.writeUInt32BE(2, 0)
  header.writeUInt32BE(2, 4)
  header.set([8, 2, 0, 0, 0], 8)
  const row = Buffer.from([0, ...rgb, ...rgb])
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat([row, row]))),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

/** Answers one image generation request (the record is already in `fake.requests`). */
export async function handleImages(fake: FakeOpenAI, ctx: ImagesContext): Promise<void> {
  const { req, res, body, bearer } = ctx
  const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_fake_${fake.requests.length}`, ...headers })
    res.end(JSON.stringify(value))
  }
  if (!body || typeof body !== 'object') return json(400, invalid('We could not parse the JSON body of your request.'))
  if (typeof body.prompt !== 'string' || !body.prompt)
    return json(400, invalid("Missing required parameter: 'prompt'.", 'prompt', 'missing_required_parameter'))
  const named: string = body.model ?? 'dall-e-2'
  const model = behaviourOf(fake, named, bearer, body.prompt)
  fake.arrivals.push(performance.now())
  if (answeredError(fake, ctx.errors, model, json)) return
  if (model === 'fail-reset') return void req.socket.destroy()
  if (model === 'hang') {
    res.on('close', () => fake.aborted++)
    return
  }
  const n = body.n ?? 1
  if (!Number.isInteger(n) || n < 1 || n > 10) return json(400, invalid(`Invalid value for 'n': ${n}. Must be between 1 and 10.`, 'n', 'invalid_value'))
  const quality = body.quality === undefined || body.quality === 'auto' ? 'medium' : body.quality
  const size = body.size === undefined || body.size === 'auto' ? '1024x1024' : body.size
  if (!FAKE_IMAGE_TOKENS[quality])
    return json(400, invalid(`Invalid value: '${body.quality}'. Supported values are: 'low', 'medium', 'high', and 'auto'.`, 'quality', 'invalid_value'))
  if (!FAKE_IMAGE_TOKENS[quality][size])
    return json(
      400,
      invalid(`Invalid value: '${body.size}'. Supported values are: '1024x1024', '1024x1536', '1536x1024', and 'auto'.`, 'size', 'invalid_value'),
    )
  if (fake.latencyMs) await sleep(fake.latencyMs)
  if (model === 'slow') await sleep(fake.slowMs)
  if (res.destroyed) return
  if (model === 'fail-badjson') {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"created": 1, "data": [{"b64_json": "iVBOR')
    return
  }
  if (model === 'fail-malformed') return json(200, { created: 1, data: 'nope' })
  const images = Array.from({ length: n }, (_, index) => fakeImage(body.prompt, index).toString('base64'))
  const data = model === 'fail-url' ? images.map((_, i) => ({ url: `https://example.invalid/${i}.png` })) : images.map((b64_json) => ({ b64_json }))
  const textTokens = Math.max(1, Math.ceil(body.prompt.length / 4))
  const outputTokens = n * FAKE_IMAGE_TOKENS[quality][size]
  return json(200, {
    created: 1764201600,
    background: body.background === 'transparent' ? 'transparent' : 'opaque',
    data,
    output_format: body.output_format ?? 'png',
    quality,
    size,
    ...(model === 'no-usage'
      ? {}
      : {
          usage: {
            input_tokens: textTokens,
            input_tokens_details: { image_tokens: 0, text_tokens: textTokens },
            output_tokens: outputTokens,
            total_tokens: textTokens + outputTokens,
          },
        }),
  })
}
