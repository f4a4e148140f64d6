import type { PolicyRewrite } from './types'

// How policies read and rewrite each API's request (docs/policies.md#policy-hooks): the model, the fallbacks, the
// input text, the output cap and the system prompt, on the request as its route validated it. A rewrite returns a new
// body and never changes the caller's.

type Body = Record<string, unknown>
type TextMap = (text: string) => string

/** How policies see one API's request body. */
export interface PolicyView {
  /** The input text's parts mapped by `map` (a new body; the parts a collector sees are the texts policies read). */
  mapTexts(body: Body, map: TextMap): Body
  /** The most output tokens the body asks for. */
  maxTokens(body: Body): number | undefined
  /** The body with its output tokens capped at `cap`; the body unchanged where the API takes no cap. */
  capTokens(body: Body, cap: number): Body
  /** The body with `text` as a system prompt before its own; the body unchanged where the API has none. */
  addSystem(body: Body, text: string): Body
}

const isRecord = (value: unknown): value is Body => typeof value === 'object' && value !== null && !Array.isArray(value)
const lower = (current: unknown, cap: number): number => (typeof current === 'number' && current < cap ? current : cap)
const numberOr = (...values: unknown[]): number | undefined => values.find((v): v is number => typeof v === 'number')

/** Maps a string, or the `key` text of each part of a list of parts of one of `types` (other parts kept as they are). */
function mapContent(content: unknown, map: TextMap, types: Record<string, string>): unknown {
  if (typeof content === 'string') return map(content)
  if (!Array.isArray(content)) return content
  return content.map((part) => {
    if (!isRecord(part) || typeof part.type !== 'string') return part
    const key = types[part.type]
    if (key && typeof part[key] === 'string') return { ...part, [key]: map(part[key] as string) }
    // Anthropic's tool results carry their own content (a string or text blocks).
    if (part.type === 'tool_result' && part.content !== undefined) return { ...part, content: mapContent(part.content, map, types) }
    return part
  })
}

const CHAT_PARTS = { text: 'text', refusal: 'refusal' }
const MESSAGES_PARTS = { text: 'text' }
const RESPONSES_PARTS = { input_text: 'text', output_text: 'text', refusal: 'refusal' }

const noCap = { maxTokens: () => undefined, capTokens: (body: Body) => body }
const noSystem = { addSystem: (body: Body) => body }
/** A request whose input text is one field (a string, or a list of strings). */
const oneField = (field: string): Pick<PolicyView, 'mapTexts'> => ({
  mapTexts: (body, map) => {
    const value = body[field]
    if (typeof value === 'string') return { ...body, [field]: map(value) }
    if (Array.isArray(value)) return { ...body, [field]: value.map((v) => (typeof v === 'string' ? map(v) : v)) }
    return body
  },
})

/** Chat completions: every message's text (OpenAI's parts), `max_tokens` / `max_completion_tokens`, a system message first. */
export const chatView: PolicyView = {
  mapTexts: (body, map) => ({
    ...body,
    messages: (body.messages as unknown[]).map((m) => (isRecord(m) && m.content != null ? { ...m, content: mapContent(m.content, map, CHAT_PARTS) } : m)),
  }),
  maxTokens: (body) => numberOr(body.max_completion_tokens, body.max_tokens),
  capTokens: (body, cap) => ({
    ...body,
    max_tokens: lower(body.max_tokens ?? body.max_completion_tokens, cap),
    ...(body.max_completion_tokens != null ? { max_completion_tokens: lower(body.max_completion_tokens, cap) } : {}),
  }),
  addSystem: (body, text) => ({ ...body, messages: [{ role: 'system', content: text }, ...(body.messages as unknown[])] }),
}

/** Anthropic's Messages: the system prompt and every message's text blocks (tool results too), `max_tokens`. */
export const messagesView: PolicyView = {
  mapTexts: (body, map) => ({
    ...body,
    ...(body.system != null ? { system: mapContent(body.system, map, MESSAGES_PARTS) } : {}),
    messages: (body.messages as unknown[]).map((m) => (isRecord(m) ? { ...m, content: mapContent(m.content, map, MESSAGES_PARTS) } : m)),
  }),
  maxTokens: (body) => numberOr(body.max_tokens),
  capTokens: (body, cap) => ({ ...body, max_tokens: lower(body.max_tokens, cap) }),
  addSystem: (body, text) => {
    const system = body.system
    if (Array.isArray(system)) return { ...body, system: [{ type: 'text', text }, ...system] }
    return { ...body, system: typeof system === 'string' && system ? `${text}\n\n${system}` : text }
  },
}

/** OpenAI's Responses: `instructions`, the input (a string, or its message items' text and function outputs), `max_output_tokens`. */
export const responsesView: PolicyView = {
  mapTexts: (body, map) => {
    const input = body.input
    const mapped =
      typeof input === 'string'
        ? map(input)
        : (input as unknown[]).map((item) => {
            if (!isRecord(item)) return item
            if (item.type === 'function_call_output') return { ...item, output: mapContent(item.output, map, RESPONSES_PARTS) }
            if (item.type === 'message' || (item.type === undefined && 'role' in item))
              return { ...item, content: mapContent(item.content, map, RESPONSES_PARTS) }
            return item
          })
    return { ...body, input: mapped, ...(typeof body.instructions === 'string' ? { instructions: map(body.instructions) } : {}) }
  },
  maxTokens: (body) => numberOr(body.max_output_tokens),
  capTokens: (body, cap) => ({ ...body, max_output_tokens: lower(body.max_output_tokens, cap) }),
  addSystem: (body, text) => ({ ...body, instructions: typeof body.instructions === 'string' && body.instructions ? `${text}\n\n${body.instructions}` : text }),
}

/** Legacy completions: the prompt, `max_tokens`. */
export const completionsView: PolicyView = {
  ...oneField('prompt'),
  maxTokens: (body) => numberOr(body.max_tokens),
  capTokens: (body, cap) => ({ ...body, max_tokens: lower(body.max_tokens, cap) }),
  ...noSystem,
}

/** Embeddings: the input (a string or strings). */
export const embeddingsView: PolicyView = { ...oneField('input'), ...noCap, ...noSystem }
/** Speech: the text to speak. */
export const speechView: PolicyView = { ...oneField('input'), ...noCap, ...noSystem }
/** Images: the prompt. */
export const imagesView: PolicyView = { ...oneField('prompt'), ...noCap, ...noSystem }
/** Transcription: no input text (the audio), only its prompt when it has one. */
export const transcriptionView: PolicyView = { ...oneField('prompt'), ...noCap, ...noSystem }

/** The input texts of a body as policies read them, in order. */
export function textsOf(view: PolicyView, body: Body): string[] {
  const texts: string[] = []
  view.mapTexts(body, (text) => {
    texts.push(text)
    return text
  })
  return texts
}

/** A body with a policy's rewrite applied (model, fallbacks, output cap, system prompt, text map), as a new body. */
export function rewriteBody(view: PolicyView, body: Body, rewrite: PolicyRewrite): Body {
  let next = body
  if (rewrite.text) next = view.mapTexts(next, rewrite.text)
  if (rewrite.model !== undefined) next = { ...next, model: rewrite.model }
  if (rewrite.models !== undefined) {
    const { models: _dropped, ...rest } = next
    next = rewrite.models.length ? { ...rest, models: rewrite.models } : rest
  }
  if (rewrite.maxTokens !== undefined) next = view.capTokens(next, rewrite.maxTokens)
  if (rewrite.system !== undefined) next = view.addSystem(next, rewrite.system)
  return next
}
