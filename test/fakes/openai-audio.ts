import type { IncomingMessage, ServerResponse } from 'node:http'
import { filler, makeWav, SPEECH_HEADERS, wavSeconds } from './audio'
import type { FakeOpenAI } from './openai'

/**
 * The audio routes of the fake OpenAI upstream, as OpenAI's API reference describes them:
 *
 * - `POST /v1/audio/speech`: JSON `{ model, input, voice, response_format, speed, instructions, stream_format }`;
 *   answers audio bytes in several chunks (a real WAV for `wav`, the format's header and deterministic bytes
 *   otherwise), or with `stream_format: "sse"` `speech.audio.delta` events (base64) then `speech.audio.done` with
 *   token usage (refused for tts-1 models, as OpenAI does). What it sent is kept in the request record's `sent`.
 * - `POST /v1/audio/transcriptions`: a multipart/form-data upload, parsed with the platform's own parser
 *   (`Response.formData()`); the record's `body` becomes `{ fields, file: { name, type, bytes } }`. Answers
 *   `{ text, usage }`: token usage for gpt-4o models (which refuse verbose_json), duration usage otherwise; with
 *   verbose_json `language`, `duration` and `segments` too.
 *
 * The model name picks a failure as for chat (`fail-500`, `fail-429`, …, `fail-reset`), plus `fail-midaudio`
 * (speech: sends a chunk, then drops the connection) and `hold`: the speech pauses after its first chunk until
 * `fake.releaseAudio()` is called.
 */
export interface AudioContext {
  req: IncomingMessage
  res: ServerResponse
  path: string
  raw: Buffer
  body: any
  bearer: string
  errors: Record<string, [number, any, Record<string, string>?]>
}

const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm']
const CHUNK = 1024

/** The bytes the fake's speech answers for a request: deterministic, so that tests can tell them apart. */
export function fakeSpeechAudio(body: { input: string; voice?: string; response_format?: string }): Buffer {
  const format = body.response_format ?? 'mp3'
  const seconds = Math.min(5, 0.02 * body.input.length)
  if (format === 'wav') return makeWav(seconds, { sampleRate: 24_000, frequency: body.voice === 'echo' ? 330 : 440 })
  const seed = [...`${body.voice}:${body.input}`].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7)
  return Buffer.concat([SPEECH_HEADERS[format], filler(Math.max(CHUNK * 3 + 17, Math.round(seconds * 6000)), seed)])
}

const error = (message: string, param: string | null = null, code: string | null = null) => ({ error: { message, type: 'invalid_request_error', param, code } })

export async function handleAudio(fake: FakeOpenAI, ctx: AudioContext): Promise<void> {
  const { req, res, path } = ctx
  const record = fake.requests[fake.requests.length - 1]
  const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_fake_${fake.requests.length}`, ...headers })
    res.end(JSON.stringify(value))
  }
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  if (path === '/v1/audio/speech') {
    const body = ctx.body
    if (!body || typeof body !== 'object') return json(400, error('We could not parse the JSON body of your request.'))
    for (const field of ['model', 'input', 'voice']) {
      if (typeof body[field] !== 'string' || !body[field])
        return json(400, error(`Missing required parameter: '${field}'.`, field, 'missing_required_parameter'))
    }
    const format = body.response_format ?? 'mp3'
    if (!SPEECH_FORMATS.includes(format)) return json(400, error(`Invalid value for 'response_format'.`, 'response_format', 'invalid_value'))
    const mode = fake.keyModes[ctx.bearer] ?? fake.modes[body.model] ?? body.model
    if (ctx.errors[mode]) {
      const [status, value, headers] = ctx.errors[mode]
      return json(status, value, headers)
    }
    if (mode === 'fail-reset') return void req.socket.destroy()
    const sse = body.stream_format === 'sse'
    if (sse && /^tts-1/.test(body.model))
      return json(400, error(`stream_format 'sse' is not supported for ${body.model}.`, 'stream_format', 'unsupported_value'))

    const audio = fakeSpeechAudio(body)
    record.sent = audio
    let ended = false
    res.on('close', () => {
      if (!ended) fake.aborted++
    })
    res.writeHead(
      200,
      sse
        ? { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': `req_fake_${fake.requests.length}` }
        : {
            'content-type': format === 'mp3' ? 'audio/mpeg' : format === 'pcm' ? 'audio/pcm' : `audio/${format}`,
            'transfer-encoding': 'chunked',
            'x-request-id': `req_fake_${fake.requests.length}`,
          },
    )
    for (let at = 0, n = 0; at < audio.length; at += CHUNK, n++) {
      if (res.destroyed) return
      const piece = audio.subarray(at, at + CHUNK)
      res.write(sse ? `data: ${JSON.stringify({ type: 'speech.audio.delta', audio: piece.toString('base64') })}\n\n` : piece)
      if (n === 0 && mode === 'hold') await fake.audioGate()
      if (n === 1 && mode === 'fail-midaudio') {
        await sleep(30)
        return void res.destroy()
      }
      await sleep(2)
    }
    if (sse) {
      const input = Math.ceil((body.input.length + (body.instructions?.length ?? 0)) / 4)
      const output = Math.ceil(audio.length / 100)
      res.write(
        `data: ${JSON.stringify({ type: 'speech.audio.done', usage: { input_tokens: input, output_tokens: output, total_tokens: input + output } })}\n\n`,
      )
    }
    ended = true
    return void res.end()
  }

  // POST /v1/audio/transcriptions
  const type = req.headers['content-type'] ?? ''
  if (!/^multipart\/form-data;/i.test(type)) return json(400, error('Content-Type must be multipart/form-data.'))
  let form: FormData
  try {
    form = await new Response(new Uint8Array(ctx.raw), { headers: { 'content-type': type } }).formData()
  } catch (e) {
    return json(400, error(`Malformed multipart body: ${(e as Error).message}`))
  }
  const fields: Record<string, string | string[]> = {}
  let file: { name: string; type: string; bytes: Buffer } | undefined
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') {
      const existing = fields[name]
      fields[name] = existing === undefined ? value : ([] as string[]).concat(existing, value)
    } else if (name === 'file') file = { name: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) }
    else return json(400, error(`Unexpected file field '${name}'.`, name))
  }
  record.body = { fields, file }
  if (!file) return json(400, error("Missing required parameter: 'file'.", 'file', 'missing_required_parameter'))
  const model = fields.model
  if (typeof model !== 'string' || !model) return json(400, error("Missing required parameter: 'model'.", 'model', 'missing_required_parameter'))
  const mode = fake.keyModes[ctx.bearer] ?? fake.modes[model] ?? model
  if (ctx.errors[mode]) {
    const [status, value, headers] = ctx.errors[mode]
    return json(status, value, headers)
  }
  if (mode === 'fail-reset') return void req.socket.destroy()
  const format = fields.response_format ?? 'json'
  const tokens = /^gpt-4o/.test(model)
  if (tokens && format === 'verbose_json')
    return json(
      400,
      error(`response_format 'verbose_json' is not compatible with model '${model}'. Use 'json' or 'text' instead.`, 'response_format', 'unsupported_value'),
    )

  const duration = wavSeconds(file.bytes) ?? 1
  const text = `Heard ${file.bytes.length} bytes from ${file.name} (${file.type}) with ${model}${fields.language ? ` in ${fields.language}` : ''}`
  const prompt = typeof fields.prompt === 'string' ? fields.prompt : ''
  const audioTokens = Math.ceil(file.bytes.length / 1000)
  const textTokens = Math.ceil(prompt.length / 4)
  const outputTokens = text.split(' ').length
  const usage = tokens
    ? {
        type: 'tokens',
        input_tokens: audioTokens + textTokens,
        input_token_details: { text_tokens: textTokens, audio_tokens: audioTokens },
        output_tokens: outputTokens,
        total_tokens: audioTokens + textTokens + outputTokens,
      }
    : { type: 'duration', seconds: Math.ceil(duration) }
  if (format === 'verbose_json') {
    return json(200, {
      task: 'transcribe',
      language: 'english',
      duration,
      text,
      segments: [
        {
          id: 0,
          seek: 0,
          start: 0,
          end: duration,
          text,
          tokens: [50364, 2425],
          temperature: Number(fields.temperature ?? 0),
          avg_logprob: -0.2,
          compression_ratio: 1.1,
          no_speech_prob: 0.01,
        },
      ],
      usage,
    })
  }
  return json(200, { text, usage })
}
