import { answeredError, behaviourOf } from './behaviour'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { fakeEmbedding, tokensText } from './embedding-vector'
import type { FakeOpenAI } from './openai'

/**
 * `POST /v1/embeddings` of the fake OpenAI upstream, as OpenAI's API reference describes it: JSON
 * `{ model, input, dimensions?, encoding_format?, user? }` where `input` is a string, strings, a token array or token
 * arrays; answers `{ object: "list", data: [{ object: "embedding", index, embedding }], model, usage }` with the
 * vectors of `fakeEmbedding` (`encoding_format: "base64"`: little-endian float32 bytes in base64, as OpenAI sends).
 * Lengths: `FAKE_EMBEDDING_DIMENSIONS` by model, else 8; `dimensions` shortens them, except for
 * text-embedding-ada-002, which refuses it (400) as OpenAI does. Usage: a token per 4 characters of each string (at
 * least 1), the length of each token array. Refused as OpenAI refuses them: no input, an empty string, an empty
 * list, more than 2,048 inputs.
 *
 * The model name (or `script`, `keyModes`, `promptModes` on the input's text, `modes`, as for chat) picks a
 * behaviour: the chat errors (`fail-400`, `fail-401`, `fail-429`, `fail-500`, `fail-503`), `fail-reset`, `hang`,
 * `fail-badjson` (broken JSON), `fail-malformed` (`data` is not a list), `fail-short` (one vector fewer than inputs),
 * `fail-null` (a vector holding null), `shuffled` (a valid answer with `data` in reverse order), `slow` (waits
 * `slowMs`), `no-usage` (no `usage` field, as some compatible hosts answer).
 */
export const FAKE_EMBEDDING_DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
  'mistral-embed': 1024,
}

export interface EmbeddingsContext {
  req: IncomingMessage
  res: ServerResponse
  body: any
  bearer: string
  errors: Record<string, [number, any, Record<string, string>?]>
}

const invalid = (message: string, param: string | null = null, code: string | null = null) => ({
  error: { message, type: 'invalid_request_error', param, code },
})
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The inputs of a request body as texts (token arrays as their tokens joined), or a string saying why it is invalid. */
function inputsOf(input: unknown): { texts: string[]; tokens: number[] } | string {
  if (typeof input === 'string')
    return input
      ? { texts: [input], tokens: [Math.max(1, Math.ceil(input.length / 4))] }
      : "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference."
  if (!Array.isArray(input) || input.length === 0)
    return "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference."
  if (input.every((x) => typeof x === 'number')) return { texts: [tokensText(input)], tokens: [input.length] }
  if (input.length > 2048) return `'$.input' is invalid: at most 2048 inputs can be embedded in one request, got ${input.length}.`
  const texts: string[] = []
  const tokens: number[] = []
  for (const item of input) {
    if (typeof item === 'string' && item) {
      texts.push(item)
      tokens.push(Math.max(1, Math.ceil(item.length / 4)))
    } else if (Array.isArray(item) && item.length && item.every((x) => typeof x === 'number')) {
      texts.push(tokensText(item))
      tokens.push(item.length)
    } else return "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference."
  }
  return { texts, tokens }
}

/** Answers one embeddings request (the record is already in `fake.requests`). */
export async function handleEmbeddings(fake: FakeOpenAI, ctx: EmbeddingsContext): Promise<void> {
  const { req, res, body, bearer } = ctx
  const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_fake_${fake.requests.length}`, ...headers })
    res.end(JSON.stringify(value))
  }
  if (!body || typeof body !== 'object') return json(400, invalid('We could not parse the JSON body of your request.'))
  if (typeof body.model !== 'string' || !body.model) return json(400, invalid('you must provide a model parameter', null, null))
  if (body.input === undefined) return json(400, invalid("'input' is a required property", 'input'))
  const named: string = body.model
  const inputs = inputsOf(body.input)
  const prompt = typeof inputs === 'string' ? '' : inputs.texts.join('\n')
  const model = behaviourOf(fake, named, bearer, prompt)
  fake.arrivals.push(performance.now())
  if (answeredError(fake, ctx.errors, model, json)) return
  if (model === 'fail-reset') {
    req.socket.destroy()
    return
  }
  if (model === 'hang') {
    res.on('close', () => fake.aborted++)
    return
  }
  if (typeof inputs === 'string') return json(400, invalid(inputs, 'input'))
  if (body.dimensions !== undefined) {
    if (named === 'text-embedding-ada-002') return json(400, invalid('This model does not support specifying dimensions.'))
    if (!Number.isInteger(body.dimensions) || body.dimensions < 1)
      return json(400, invalid(`Invalid value for 'dimensions' = ${body.dimensions}. Must be greater than 0.`, 'dimensions'))
  }
  if (fake.latencyMs) await sleep(fake.latencyMs)
  if (model === 'slow') await sleep(fake.slowMs)
  if (res.destroyed) return
  if (model === 'fail-badjson') {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [0.1,')
    return
  }
  if (model === 'fail-malformed') return json(200, { object: 'list', data: 'nope', model: named })

  const dimensions: number = body.dimensions ?? FAKE_EMBEDDING_DIMENSIONS[named] ?? 8
  const base64 = body.encoding_format === 'base64'
  const encode = (vector: number[]) => (base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector)
  let data: any[] = inputs.texts.map((text, index) => ({ object: 'embedding', index, embedding: encode(fakeEmbedding(text, dimensions)) }))
  if (model === 'fail-short') data = data.slice(0, -1)
  if (model === 'fail-null') data[0].embedding = [null, ...fakeEmbedding(inputs.texts[0], dimensions - 1)]
  if (model === 'shuffled') data.reverse()
  const promptTokens = inputs.tokens.reduce((sum, n) => sum + n, 0)
  return json(200, {
    object: 'list',
    data,
    model: named,
    ...(model === 'no-usage' ? {} : { usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } }),
  })
}
