import { fakeEmbedding } from './embedding-vector'

/**
 * The embedding methods of the fake Gemini API, as its reference (ai.google.dev/api/embeddings) describes them:
 * - `POST /v1beta/models/{model}:embedContent` `{ content: { parts: [{ text }] }, taskType?, title?, outputDimensionality? }`
 *   → `{ embedding: { values } }`;
 * - `POST /v1beta/models/{model}:batchEmbedContents` `{ requests: [{ model: "models/{model}", content, … }] }` →
 *   `{ embeddings: [{ values }] }` in request order; more than 100 requests, or a request naming another model, is a
 *   400 INVALID_ARGUMENT.
 * Vectors are `fakeEmbedding(<the parts' text joined by spaces>, n)`, n = `outputDimensionality` or the model's
 * length (`FAKE_GEMINI_EMBEDDING_DIMENSIONS`). `gemini-embedding-2*` models also answer `usageMetadata`
 * (`promptTokenCount`: a token per 4 characters, at least 1 per text); the others report no usage. Models that do not
 * embed (`gemini-2.5-flash`, …) and unknown names answer 404 NOT_FOUND as the real API does.
 *
 * Failures: the model name, or the next entry of `fake.textScript[text]` for a call that embeds that text, else of
 * `fake.script[model]` (one per embedding call), picks one of the chat errors (`fail-429`, `fail-503`, `fail-500`,
 * `fail-400`, `fail-401`, `fail-403`), `fail-malformed` (values that are not numbers), `fail-short` (a batch answer
 * with one embedding fewer) or `hang` (no answer until the client closes the connection, counted in `fake.aborted`).
 */
export const FAKE_GEMINI_EMBEDDING_DIMENSIONS: Record<string, number> = {
  'gemini-embedding-001': 3072,
  'gemini-embedding-2': 3072,
  'gemini-embedding-2-preview': 3072,
  'text-embedding-004': 768,
}

const EMBED_FIELDS = ['model', 'content', 'taskType', 'title', 'outputDimensionality']
const TASK_TYPES = [
  'TASK_TYPE_UNSPECIFIED',
  'RETRIEVAL_QUERY',
  'RETRIEVAL_DOCUMENT',
  'SEMANTIC_SIMILARITY',
  'CLASSIFICATION',
  'CLUSTERING',
  'QUESTION_ANSWERING',
  'FACT_VERIFICATION',
  'CODE_RETRIEVAL_QUERY',
]

export interface GeminiEmbedContext {
  model: string
  method: 'embedContent' | 'batchEmbedContents'
  body: any
  /** The behaviour picked for this call (a `script` entry or the model name). */
  behaviour: string
  json(status: number, value: unknown): void
  fail(code: number, status: string, message: string, details?: any[]): void
  errors: Record<string, [number, string, string, any[]?]>
  apiKey: string
}

class Invalid extends Error {}

/** The text of one EmbedContentRequest, checked as the real API checks it (400 on unknown fields, empty parts, …). */
function textOf(request: any, at: string, model: string): { text: string; dims?: number } {
  if (typeof request !== 'object' || request === null) throw new Invalid(`Invalid value at '${at}'`)
  for (const key of Object.keys(request))
    if (!EMBED_FIELDS.includes(key)) throw new Invalid(`Invalid JSON payload received. Unknown name "${key}"${at ? ` at '${at}'` : ''}: Cannot find field.`)
  if (request.model !== undefined && request.model !== `models/${model}`)
    throw new Invalid(`* BatchEmbedContentsRequest.${at}.model: the model of each request must be the batch's model, models/${model}; got ${request.model}\n`)
  const parts = request.content?.parts
  if (!Array.isArray(parts) || parts.length === 0)
    throw new Invalid(`* EmbedContentRequest.${at ? `${at}.` : ''}content.parts: contents.parts must not be empty.\n`)
  if (!parts.every((p: any) => typeof p?.text === 'string'))
    throw new Invalid(`* EmbedContentRequest.${at ? `${at}.` : ''}content.parts: only text parts can be embedded.\n`)
  if (request.taskType !== undefined && !TASK_TYPES.includes(request.taskType))
    throw new Invalid(`Invalid value at '${at ? `${at}.` : ''}task_type', "${request.taskType}"`)
  const dims = request.outputDimensionality
  if (dims !== undefined && (!Number.isInteger(dims) || dims < 1))
    throw new Invalid(`* EmbedContentRequest.${at ? `${at}.` : ''}output_dimensionality: must be positive.\n`)
  return { text: parts.map((p: any) => p.text).join(' '), dims }
}

const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4))

/** Answers one embedContent or batchEmbedContents call. */
export function handleGeminiEmbed(ctx: GeminiEmbedContext) {
  const { model, method, body, behaviour } = ctx
  if (ctx.errors[behaviour]) return ctx.fail(...ctx.errors[behaviour])
  if (behaviour === 'fail-403') return ctx.fail(403, 'PERMISSION_DENIED', `Permission denied: Consumer 'api_key:${ctx.apiKey}' has been suspended.`)
  const defaultDims = FAKE_GEMINI_EMBEDDING_DIMENSIONS[model] ?? (model.startsWith('fail-') || model.startsWith('test-') ? 8 : undefined)
  if (defaultDims === undefined) {
    return ctx.fail(
      404,
      'NOT_FOUND',
      `models/${model} is not found for API version v1beta, or is not supported for ${method}. Call ListModels to see the list of available models and their supported methods.`,
    )
  }
  let items: { text: string; dims?: number }[]
  try {
    if (method === 'embedContent') items = [textOf(body, '', model)]
    else {
      if (typeof body !== 'object' || body === null) throw new Invalid('Invalid JSON payload received. Expected an object.')
      for (const key of Object.keys(body)) if (key !== 'requests') throw new Invalid(`Invalid JSON payload received. Unknown name "${key}": Cannot find field.`)
      if (!Array.isArray(body.requests) || body.requests.length === 0) throw new Invalid('* BatchEmbedContentsRequest.requests: requests is not specified\n')
      if (body.requests.length > 100) throw new Invalid('* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch\n')
      items = body.requests.map((request: any, i: number) => textOf(request, `requests[${i}]`, model))
    }
  } catch (error) {
    if (error instanceof Invalid) return ctx.fail(400, 'INVALID_ARGUMENT', error.message)
    throw error
  }
  const vectors = items.map(({ text, dims }) => ({ values: fakeEmbedding(text, dims ?? defaultDims) as unknown[] }))
  if (behaviour === 'fail-malformed') vectors[0].values = ['nope']
  if (behaviour === 'fail-short' && vectors.length > 1) vectors.pop()
  const promptTokenCount = items.reduce((sum, { text }) => sum + tokens(text), 0)
  const usage = model.startsWith('gemini-embedding-2') ? { usageMetadata: { promptTokenCount, totalTokenCount: promptTokenCount } } : {}
  ctx.json(200, method === 'embedContent' ? { embedding: vectors[0], ...usage } : { embeddings: vectors, ...usage })
}
