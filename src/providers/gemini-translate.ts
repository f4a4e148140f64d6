import { randomBytes, toBase64Url } from '../crypto/hash'
import { invalidRequest } from '../errors'
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '../http/json-depth'
import { toGeminiJsonSchema, toGeminiParameters } from './gemini-schema'
import type { ProviderModel, UpstreamChatRequest, UpstreamCompletion, UpstreamUsage, UpstreamSource } from '../contracts'
import { UpstreamError, upstreamError } from './upstream-error'
import { nearestEffort, reasoningOf, requestedEffort } from './reasoning'

/*
 * OpenAI chat format ⇄ Gemini `generateContent` (API reference: ai.google.dev/api/generate-content, types as in
 * `@google/genai`). Requests: messages → `contents` (assistant → `model`, tool results → `functionResponse` parts of
 * one `user` turn) and `systemInstruction`; tools → `functionDeclarations` with `parametersJsonSchema`; sampling,
 * JSON output and thinking → `generationConfig`. Answers: parts → content / reasoning / tool_calls, finish reasons,
 * `usageMetadata` → usage, Gemini's error bodies → the gateway's errors.
 *
 * Thought signatures (opaque strings Gemini 3 requires back on the function calls of the current turn) travel in
 * the answer as `message.reasoning_details` (`{ type: 'reasoning.encrypted', format: 'google-gemini-v1', data, id }`,
 * OpenRouter's convention; the id is the tool call's) and on each tool call as `extra_content.google.thought_signature`
 * (the convention of Google's own OpenAI-compatible endpoint). Both are read back from the history.
 */

// ----------------------------------------------------------------------------------------------------------------
// The Gemini wire format (the fields used here).

export interface GeminiPart {
  text?: string
  thought?: boolean
  thoughtSignature?: string
  inlineData?: { mimeType: string; data: string }
  fileData?: { mimeType?: string; fileUri: string }
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> }
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> }
  [key: string]: unknown
}
export interface GeminiContent {
  role?: string
  parts?: GeminiPart[]
}
export interface GeminiRequest {
  contents: GeminiContent[]
  systemInstruction?: GeminiContent
  tools?: { functionDeclarations: { name: string; description?: string; parametersJsonSchema?: Record<string, unknown> }[] }[]
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } }
  generationConfig?: Record<string, unknown>
}
export interface GeminiUsage {
  promptTokenCount?: number
  cachedContentTokenCount?: number
  candidatesTokenCount?: number
  thoughtsTokenCount?: number
  toolUsePromptTokenCount?: number
  totalTokenCount?: number
  promptTokensDetails?: { modality?: string; tokenCount?: number }[]
  candidatesTokensDetails?: { modality?: string; tokenCount?: number }[]
}
interface LogprobCandidate {
  token?: string
  tokenId?: number
  logProbability?: number
}
export interface GeminiLogprobs {
  topCandidates?: { candidates?: LogprobCandidate[] }[]
  chosenCandidates?: LogprobCandidate[]
}
export interface GeminiCandidate {
  content?: GeminiContent
  finishReason?: string
  index?: number
  logprobsResult?: GeminiLogprobs
}
export interface GeminiErrorBody {
  code?: number
  message?: string
  status?: string
  details?: { '@type'?: string; retryDelay?: string; reason?: string; [key: string]: unknown }[]
}
export interface GeminiResponse {
  candidates?: GeminiCandidate[]
  promptFeedback?: { blockReason?: string; blockReasonMessage?: string }
  usageMetadata?: GeminiUsage
  modelVersion?: string
  responseId?: string
  error?: GeminiErrorBody
}

// ----------------------------------------------------------------------------------------------------------------
// Request: OpenAI → Gemini.

/** How thoughts are kept between turns: see the header comment. */
export const SIGNATURE_FORMAT = 'google-gemini-v1'
/** Google's documented stand-in for a function call whose signature was not kept (history from elsewhere). */
export const FOREIGN_SIGNATURE = 'skip_thought_signature_validator'

/**
 * `reasoning.effort` → `thinkingBudget` (tokens) for Gemini 2.5, whose budgets run from 0 (Flash, Flash-Lite) or 128
 * (Pro) up to 24 576 (Flash, Flash-Lite) / 32 768 (Pro): minimal 512, low 2 048, medium 8 192, high 24 576, xhigh and
 * max the model's largest. Gemini 3 takes `thinkingLevel` instead: the nearest level the model offers (its catalogue
 * `reasoning.efforts`). `reasoning.max_tokens` is sent as `thinkingBudget` as it is, for both. docs/reasoning.md.
 */
export const THINKING_BUDGETS: Record<string, number> = { minimal: 512, low: 2_048, medium: 8_192, high: 24_576 }
/** The largest `thinkingBudget` of Gemini 2.5 Pro, and of the other 2.5 models; the smallest of 2.5 Pro, which cannot turn thinking off. */
export const MAX_THINKING_BUDGET = { pro: 32_768, other: 24_576 }
export const MIN_PRO_THINKING_BUDGET = 128
const LEVELS = ['minimal', 'low', 'medium', 'high']

const IMAGE_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
}
const FILE_TYPES: Record<string, string> = {
  ...IMAGE_TYPES,
  pdf: 'application/pdf',
  txt: 'text/plain',
  md: 'text/md',
  html: 'text/html',
  csv: 'text/csv',
  xml: 'text/xml',
  wav: 'audio/wav',
  mp3: 'audio/mp3',
  aiff: 'audio/aiff',
  aac: 'audio/aac',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
  mp4: 'video/mp4',
  mpeg: 'video/mpeg',
  mov: 'video/mov',
  avi: 'video/avi',
  webm: 'video/webm',
  '3gp': 'video/3gpp',
}
/** `input_audio.format` → the MIME type Gemini takes (its audio formats: WAV, MP3, AIFF, AAC, OGG Vorbis, FLAC). */
export const AUDIO_TYPES: Record<string, string> = {
  wav: 'audio/wav',
  mp3: 'audio/mp3',
  aiff: 'audio/aiff',
  aac: 'audio/aac',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
}

type Json = Record<string, unknown>
type ResponseFormat = { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; json_schema: { name: string; schema?: Json } }
interface Message {
  role: string
  content?: unknown
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string }; extra_content?: { google?: { thought_signature?: string } } }[]
  tool_call_id?: string
  reasoning_details?: unknown
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** True for models that take `thinkingLevel` (Gemini 3 and later) rather than only `thinkingBudget`. */
export const usesThinkingLevel = (upstreamModel: string) => /^(models\/)?gemini-([3-9]|\d{2,})/.test(upstreamModel)

/** The Gemini request body for an OpenAI-format chat request; `model` is the catalogue's entry of the model, if any. */
export function toGeminiRequest(request: UpstreamChatRequest, model?: ProviderModel): GeminiRequest {
  const thinkingLevel = usesThinkingLevel(request.model)
  const system: GeminiPart[] = []
  const contents: GeminiContent[] = []
  const callNames = new Map<string, string>()

  for (const [i, message] of (request.messages as Message[]).entries()) {
    const where = `messages[${i}]`
    if (message.role === 'system' || message.role === 'developer') {
      system.push(...textParts(message.content, `${where}.content`))
    } else if (message.role === 'user') {
      contents.push({ role: 'user', parts: userParts(message.content, `${where}.content`) })
    } else if (message.role === 'assistant') {
      const parts = modelParts(message, where, callNames, thinkingLevel)
      if (parts.length) contents.push({ role: 'model', parts })
    } else if (message.role === 'tool') {
      const id = message.tool_call_id ?? ''
      const name = callNames.get(id)
      if (!name) throw invalidRequest(`${where}.tool_call_id: no earlier assistant message has a tool call with id "${id}"`, `${where}.tool_call_id`)
      const part: GeminiPart = { functionResponse: { id, name, response: toolResponse(message.content) } }
      // Results of one step's calls (parallel calls) go back together, in one user turn.
      const last = contents.at(-1)
      if (last?.role === 'user' && last.parts?.every((p) => p.functionResponse)) last.parts.push(part)
      else contents.push({ role: 'user', parts: [part] })
    }
  }
  if (!contents.length) throw invalidRequest('messages: Gemini needs at least one user or assistant message besides system messages', 'messages')

  const body: GeminiRequest = { contents }
  if (system.length) body.systemInstruction = { parts: system }
  const tools = (request.tools ?? []) as { function: { name: string; description?: string; parameters?: Json } }[]
  if (tools.length) {
    body.tools = [
      {
        functionDeclarations: tools.map(({ function: fn }, i) => ({
          name: fn.name,
          ...(fn.description ? { description: fn.description } : {}),
          ...(fn.parameters ? { parametersJsonSchema: toGeminiParameters(fn.parameters, `tools[${i}].function.parameters`) } : {}),
        })),
      },
    ]
    const choice = request.tool_choice
    if (choice === 'none') body.toolConfig = { functionCallingConfig: { mode: 'NONE' } }
    else if (choice === 'auto') body.toolConfig = { functionCallingConfig: { mode: 'AUTO' } }
    else if (choice === 'required') body.toolConfig = { functionCallingConfig: { mode: 'ANY' } }
    else if (isObject(choice))
      body.toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [(choice as { function: { name: string } }).function.name] } }
  }
  body.generationConfig = generationConfig(request, model, thinkingLevel)
  return body
}

function generationConfig(request: UpstreamChatRequest, model: ProviderModel | undefined, thinkingLevel: boolean): Json {
  const config: Json = { candidateCount: 1 }
  const set = (key: string, value: unknown) => {
    if (value !== undefined && value !== null) config[key] = value
  }
  set('temperature', request.temperature)
  set('topP', request.top_p)
  set('topK', request.top_k)
  set('maxOutputTokens', request.max_completion_tokens ?? request.max_tokens)
  if (request.stop != null) config.stopSequences = Array.isArray(request.stop) ? request.stop : [request.stop]
  set('seed', request.seed)
  set('presencePenalty', request.presence_penalty)
  set('frequencyPenalty', request.frequency_penalty)
  if (request.logprobs) {
    config.responseLogprobs = true
    set('logprobs', request.top_logprobs)
  }
  const format = request.response_format as ResponseFormat | undefined
  if (format?.type === 'json_object') config.responseMimeType = 'application/json'
  else if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json'
    if (format.json_schema.schema) config.responseJsonSchema = toGeminiJsonSchema(format.json_schema.schema, 'response_format.json_schema.schema')
  }
  // OpenRouter's `modalities: ["image", "text"]` → responseModalities (Gemini's image models; docs/images.md#images-in-chat).
  const modalities = (request as { modalities?: unknown }).modalities
  if (Array.isArray(modalities) && modalities.includes('image'))
    config.responseModalities = modalities.filter((m): m is string => m === 'text' || m === 'image').map((m) => m.toUpperCase())
  const thinking = thinkingConfig(request, model, thinkingLevel)
  if (thinking) config.thinkingConfig = thinking
  return config
}

function thinkingConfig(request: UpstreamChatRequest, model: ProviderModel | undefined, thinkingLevel: boolean): Json | undefined {
  const reasoning = reasoningOf(request)
  const asked = requestedEffort(request)
  if (!reasoning && !asked) return model?.reasoning ? { includeThoughts: true } : undefined
  const levels = model?.reasoning?.efforts?.filter((e) => LEVELS.includes(e))
  const level = (effort: string) => (nearestEffort(effort, levels?.length ? levels : LEVELS) ?? 'high').toUpperCase()
  const pro = /(^|\/)gemini-[\d.]+-pro/.test(request.model)
  const config: Json = { includeThoughts: !reasoning?.exclude }
  if (asked === 'none') {
    // Gemini 2.5 Flash / Flash-Lite turn thinking off with a budget of 0; 2.5 Pro and Gemini 3 cannot: their least then.
    if (thinkingLevel) config.thinkingLevel = level('minimal')
    else config.thinkingBudget = pro || model?.reasoning?.mandatory ? MIN_PRO_THINKING_BUDGET : 0
    config.includeThoughts = false
  } else if (reasoning?.max_tokens !== undefined) config.thinkingBudget = reasoning.max_tokens
  else if (asked) {
    if (thinkingLevel) config.thinkingLevel = level(asked)
    else config.thinkingBudget = THINKING_BUDGETS[asked] ?? (pro ? MAX_THINKING_BUDGET.pro : MAX_THINKING_BUDGET.other)
  }
  return config
}

/** Text parts only (system instructions, assistant text). */
function textParts(content: unknown, where: string): GeminiPart[] {
  if (typeof content === 'string') return content ? [{ text: content }] : []
  if (!Array.isArray(content)) return []
  return content
    .map((part: { type: string; text?: string; refusal?: string }, i) => {
      if (part.type === 'text') return { text: part.text ?? '' }
      if (part.type === 'refusal') return { text: part.refusal ?? '' }
      throw invalidRequest(`${where}[${i}]: only text parts are accepted here by Gemini`, `${where}[${i}]`)
    })
    .filter((part) => part.text)
}

function userParts(content: unknown, where: string): GeminiPart[] {
  if (typeof content === 'string') return [{ text: content }]
  return (content as Json[]).map((part, i) => {
    const at = `${where}[${i}]`
    switch (part.type) {
      case 'text':
        return { text: part.text as string }
      case 'refusal':
        return { text: part.refusal as string }
      case 'image_url':
        return imagePart((part.image_url as { url: string }).url, `${at}.image_url.url`)
      case 'input_audio':
        return audioPart(part.input_audio as { data: string; format: string }, `${at}.input_audio`)
      case 'file':
        return filePart(part.file as { file_data?: string; file_id?: string; filename?: string }, `${at}.file`)
      default:
        throw invalidRequest(`${at}: content part type "${String(part.type)}" is not supported by Gemini`, at)
    }
  })
}

/** A base64 data URL's type and data, or undefined for anything else. */
function parseDataUrl(url: string): { mimeType: string; data: string } | undefined {
  const match = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url)
  if (!match) return undefined
  if (!/;base64$/i.test(match[2])) return undefined
  return { mimeType: match[1] || 'application/octet-stream', data: match[3] }
}

/** The extension of a file name or path, lower case ('' when none). */
const extensionOf = (name: string) => /\.([A-Za-z0-9]+)$/.exec(name)?.[1].toLowerCase() ?? ''
/** The path of a URL ('' when it is not one). */
const pathOf = (url: string) => {
  try {
    return new URL(url).pathname
  } catch {
    return ''
  }
}

/**
 * An image: a base64 data URL → `inlineData`; an http(s) URL → `fileData` (since January 2026 the Gemini API fetches
 * public and signed http(s) URLs itself), typed by its extension, as `fileData` needs a MIME type.
 */
function imagePart(url: string, where: string): GeminiPart {
  if (url.startsWith('data:')) {
    const inline = parseDataUrl(url)
    if (!inline) throw invalidRequest(`${where}: a data URL must be base64 (data:image/png;base64,…)`, where)
    return { inlineData: inline }
  }
  if (/^https?:\/\//i.test(url)) {
    const mimeType = IMAGE_TYPES[extensionOf(pathOf(url))]
    if (!mimeType) {
      throw invalidRequest(
        `${where}: Gemini needs the type of an image URL, and this one's cannot be told from its name: use a URL ending in .png, .jpg, .jpeg, .webp, .heic or .heif, or send the image as a base64 data URL`,
        where,
      )
    }
    return { fileData: { mimeType, fileUri: url } }
  }
  throw invalidRequest(`${where}: Gemini takes images as base64 data URLs or http(s) URLs`, where)
}

function audioPart(audio: { data: string; format: string }, where: string): GeminiPart {
  const mimeType = AUDIO_TYPES[audio.format.toLowerCase()]
  if (!mimeType) throw invalidRequest(`${where}.format: Gemini takes audio as ${Object.keys(AUDIO_TYPES).join(', ')}, not "${audio.format}"`, `${where}.format`)
  const inline = audio.data.startsWith('data:') ? parseDataUrl(audio.data) : undefined
  return { inlineData: { mimeType, data: inline?.data ?? audio.data } }
}

function filePart(file: { file_data?: string; file_id?: string; filename?: string }, where: string): GeminiPart {
  const byName = FILE_TYPES[extensionOf(file.filename ?? '')]
  if (file.file_data?.startsWith('data:')) {
    const inline = parseDataUrl(file.file_data)
    if (!inline) throw invalidRequest(`${where}.file_data: a data URL must be base64 (data:application/pdf;base64,…)`, `${where}.file_data`)
    if (inline.mimeType === 'application/octet-stream' && byName) inline.mimeType = byName
    return { inlineData: inline }
  }
  if (file.file_data && /^https?:\/\//i.test(file.file_data)) {
    const mimeType = FILE_TYPES[extensionOf(pathOf(file.file_data))] ?? byName
    if (!mimeType)
      throw invalidRequest(
        `${where}.file_data: Gemini needs the type of a file URL, and this one's cannot be told from its name or filename`,
        `${where}.file_data`,
      )
    return { fileData: { mimeType, fileUri: file.file_data } }
  }
  throw invalidRequest(`${where}: Gemini takes files as base64 data URLs or http(s) URLs in file_data (file_id is not supported)`, where)
}

/** Thought signatures kept in an assistant message: by tool call id, `''` for the one of its text. */
function signaturesOf(details: unknown): Map<string, string> {
  const found = new Map<string, string>()
  if (!Array.isArray(details)) return found
  for (const detail of details) {
    if (isObject(detail) && detail.type === 'reasoning.encrypted' && detail.format === SIGNATURE_FORMAT && typeof detail.data === 'string') {
      found.set(typeof detail.id === 'string' ? detail.id : '', detail.data)
    }
  }
  return found
}

function modelParts(message: Message, where: string, callNames: Map<string, string>, thinkingLevel: boolean): GeminiPart[] {
  const signatures = signaturesOf(message.reasoning_details)
  const text = textParts(message.content, `${where}.content`)
    .map((p) => p.text)
    .join('')
  const parts: GeminiPart[] = []
  if (text) parts.push({ text, ...(signatures.has('') ? { thoughtSignature: signatures.get('') } : {}) })
  for (const [j, call] of (message.tool_calls ?? []).entries()) {
    const at = `${where}.tool_calls[${j}].function.arguments`
    let args: unknown = {}
    if (call.function.arguments.trim()) {
      if (exceedsJsonDepth(call.function.arguments)) throw invalidRequest(`${at}: nested deeper than ${MAX_JSON_DEPTH} levels`, at)
      try {
        args = JSON.parse(call.function.arguments)
      } catch {
        throw invalidRequest(`${at}: is not valid JSON`, at)
      }
    }
    if (!isObject(args)) throw invalidRequest(`${at}: Gemini needs the arguments as a JSON object`, at)
    const signature = call.extra_content?.google?.thought_signature ?? signatures.get(call.id)
    parts.push({ functionCall: { id: call.id, name: call.function.name, args }, ...(signature ? { thoughtSignature: signature } : {}) })
    callNames.set(call.id, call.function.name)
  }
  // Gemini 3 answers 400 when the first function call of a step has no signature (a history from another model).
  const first = parts.find((p) => p.functionCall)
  if (thinkingLevel && first && !first.thoughtSignature) first.thoughtSignature = FOREIGN_SIGNATURE
  return parts
}

/**
 * A tool message's content as `functionResponse.response`, which must be an object: JSON objects as they are, else
 * `{ output }` (also JSON nested too deep to send on, which stays text).
 */
function toolResponse(content: unknown): Json {
  const text = typeof content === 'string' ? content : Array.isArray(content) ? content.map((p: { text?: string }) => p.text ?? '').join('') : ''
  if (exceedsJsonDepth(text)) return { output: text }
  try {
    const parsed = JSON.parse(text)
    return isObject(parsed) ? parsed : { output: parsed }
  } catch {
    return { output: text }
  }
}

// ----------------------------------------------------------------------------------------------------------------
// Answers: Gemini → OpenAI.

const newCallId = () => `call_${toBase64Url(randomBytes(12))}`

/** The reasoning detail that carries a thought signature back to the client. */
export interface SignatureDetail {
  type: 'reasoning.encrypted'
  format: typeof SIGNATURE_FORMAT
  data: string
  id?: string
  index: number
}

/** What a list of parts says, in OpenAI's terms; tool calls are numbered from `firstIndex`. */
export interface ReadParts {
  content: string
  reasoning: string
  toolCalls: { index: number; id: string; type: 'function'; function: { name: string; arguments: string }; extra_content?: Json }[]
  signatures: SignatureDetail[]
  images: { type: 'image_url'; image_url: { url: string } }[]
}

/** Reads candidate parts: text, thought text, whole function calls, signatures, generated images. */
export function readParts(parts: GeminiPart[] | undefined, firstIndex = 0, firstSignature = 0): ReadParts {
  const read: ReadParts = { content: '', reasoning: '', toolCalls: [], signatures: [], images: [] }
  for (const part of parts ?? []) {
    const signature = typeof part.thoughtSignature === 'string' && part.thoughtSignature ? part.thoughtSignature : undefined
    if (part.functionCall) {
      const id = part.functionCall.id || newCallId()
      read.toolCalls.push({
        index: firstIndex + read.toolCalls.length,
        id,
        type: 'function',
        function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
        ...(signature ? { extra_content: { google: { thought_signature: signature } } } : {}),
      })
      if (signature)
        read.signatures.push({ type: 'reasoning.encrypted', format: SIGNATURE_FORMAT, data: signature, id, index: firstSignature + read.signatures.length })
      continue
    }
    if (typeof part.text === 'string') {
      if (part.thought) read.reasoning += part.text
      else read.content += part.text
    } else if (part.inlineData) {
      read.images.push({ type: 'image_url', image_url: { url: `data:${part.inlineData.mimeType};base64,${part.inlineData.data}` } })
    }
    if (signature)
      read.signatures.push({ type: 'reasoning.encrypted', format: SIGNATURE_FORMAT, data: signature, index: firstSignature + read.signatures.length })
  }
  return read
}

// normalizeFinishReason (src/generation/finish-reason.ts) maps these three right, so they are passed on as Gemini sent them.
const PASSED_ON = new Set(['STOP', 'MAX_TOKENS', 'SAFETY'])
const FILTERED = new Set(['RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'LANGUAGE', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION'])
const FAILED = new Set(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS'])

/**
 * Gemini's finish reason as the upstream `finish_reason`: STOP, MAX_TOKENS and SAFETY as they are; an answer with
 * function calls → `tool_calls` (Gemini says STOP); the other filters → `content_filter`, failed tool calls →
 * `error`, CONTINUATION → `length`, the rest → `stop`.
 */
export function finishReasonOf(native: string | undefined, hasToolCalls: boolean): string | null {
  if (!native) return null
  if (hasToolCalls && (native === 'STOP' || native === 'MAX_TOKENS')) return 'tool_calls'
  if (PASSED_ON.has(native)) return native
  if (FILTERED.has(native)) return 'content_filter'
  if (FAILED.has(native)) return 'error'
  if (native === 'CONTINUATION') return 'length'
  return 'stop'
}

/** `usageMetadata` as OpenAI usage: thoughts are completion tokens (and reasoning tokens), cached tokens are part of the prompt. */
export function usageOf(usage: GeminiUsage): UpstreamUsage {
  const prompt = (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0)
  const thoughts = usage.thoughtsTokenCount ?? 0
  const completion = (usage.candidatesTokenCount ?? 0) + thoughts
  const audio = usage.promptTokensDetails?.find((d) => d.modality === 'AUDIO')?.tokenCount
  // Image output tokens (an image model's answer), billed at the model's image_output price.
  const images = usage.candidatesTokensDetails?.find((d) => d.modality === 'IMAGE')?.tokenCount
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: usage.cachedContentTokenCount ?? 0, ...(audio ? { audio_tokens: audio } : {}) },
    completion_tokens_details: { reasoning_tokens: thoughts, ...(images ? { image_tokens: images } : {}) },
  }
}

/** `logprobsResult` as OpenAI's `logprobs`. */
export function logprobsOf(result: GeminiLogprobs | undefined) {
  if (!result?.chosenCandidates) return undefined
  const entry = (c: LogprobCandidate) => ({ token: c.token ?? '', logprob: c.logProbability ?? 0, bytes: [...Buffer.from(c.token ?? '')] })
  return {
    content: result.chosenCandidates.map((chosen, i) => ({ ...entry(chosen), top_logprobs: (result.topCandidates?.[i]?.candidates ?? []).map(entry) })),
    refusal: null,
  }
}

/** The error for an answer whose prompt Gemini blocked (`promptFeedback.blockReason`): a 400, not worth another provider. */
export function blockedPromptError(provider: UpstreamSource, feedback: NonNullable<GeminiResponse['promptFeedback']>): UpstreamError {
  const reason = feedback.blockReason ?? 'BLOCKED_REASON_UNSPECIFIED'
  return new UpstreamError({
    kind: 'content_filter',
    provider,
    message: `${provider.name} blocked the prompt (${reason})`,
    raw: `promptFeedback.blockReason: ${reason}${feedback.blockReasonMessage ? ` (${feedback.blockReasonMessage})` : ''}`,
  })
}

/** A whole `generateContent` answer as an OpenAI completion. */
export function fromGeminiResponse(body: GeminiResponse, provider: UpstreamSource, nowSeconds: number): UpstreamCompletion {
  const candidate = body.candidates?.[0]
  if (!candidate) {
    if (body.promptFeedback?.blockReason) throw blockedPromptError(provider, body.promptFeedback)
    throw upstreamError(provider, 'malformed_response', `no candidate in the answer: ${JSON.stringify(body).slice(0, 200)}`)
  }
  const read = readParts(candidate.content?.parts)
  const logprobs = logprobsOf(candidate.logprobsResult)
  return {
    ...(body.responseId ? { id: body.responseId } : {}),
    created: nowSeconds,
    ...(body.modelVersion ? { model: body.modelVersion } : {}),
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: read.content || null,
          reasoning: read.reasoning || null,
          ...(read.toolCalls.length ? { tool_calls: read.toolCalls.map(({ index: _index, ...call }) => call) } : {}),
          ...(read.signatures.length ? { reasoning_details: read.signatures } : {}),
          ...(read.images.length ? { images: read.images } : {}),
        },
        finish_reason: finishReasonOf(candidate.finishReason, read.toolCalls.length > 0),
        // Gemini's own value, for when src/chat/shape.ts keeps a provider's native reason (see finishReasonOf).
        native_finish_reason: candidate.finishReason ?? null,
        ...(logprobs ? { logprobs } : {}),
      },
    ],
    ...(body.usageMetadata ? { usage: usageOf(body.usageMetadata) } : {}),
  }
}

// ----------------------------------------------------------------------------------------------------------------
// Errors: Gemini's `{ error: { code, message, status, details } }` → the gateway's envelope.

/** The error object of a Gemini error body (also the `[{ error }]` form), or undefined. */
export function errorBodyOf(text: string): GeminiErrorBody | undefined {
  try {
    const parsed = JSON.parse(text) as unknown
    const body = Array.isArray(parsed) ? parsed[0] : parsed
    return isObject(body) && isObject(body.error) ? (body.error as GeminiErrorBody) : undefined
  } catch {
    return undefined
  }
}

const CONTEXT_LENGTH = /input token count.*exceeds|exceeds the maximum number of tokens|context (length|window)|too many tokens/i
const BAD_KEY = /API key not valid|API key expired|API_KEY_INVALID|API key was reported as leaked/i

/**
 * Maps a Gemini error (HTTP status, or the `code` of an error sent inside a stream) to an UpstreamError:
 * 429 RESOURCE_EXHAUSTED → rate_limit_exceeded (with Retry-After from RetryInfo), 503 UNAVAILABLE → provider_overloaded,
 * 401 / 403 and a rejected key (400 "API key not valid") → authentication, 400 token-count errors →
 * context_length_exceeded, other 400 / 404 → invalid_request, 504 → timeout, 500 and other 5xx → provider_unavailable.
 * The provider's message goes to metadata.raw, with `secrets` (the API key) blanked out.
 */
export function geminiError(
  provider: UpstreamSource,
  httpStatus: number,
  text: string,
  headers: Record<string, string>,
  secrets: (string | undefined)[],
): UpstreamError {
  const error = errorBodyOf(text)
  const status = httpStatus || error?.code || 500
  const grpc = error?.status ?? ''
  let raw = error?.message ? `${grpc ? `${grpc}: ` : ''}${error.message}` : text.slice(0, 500)
  for (const secret of secrets) if (secret) raw = raw.split(secret).join('[redacted]')
  const reasons = (error?.details ?? [])
    .map((d) => d.reason)
    .filter(Boolean)
    .join(' ')

  if (status === 429 || grpc === 'RESOURCE_EXHAUSTED') {
    const delay = error?.details?.find((d) => d['@type']?.endsWith('RetryInfo'))?.retryDelay
    const seconds = delay ? Math.ceil(Number.parseFloat(delay)) : undefined
    const retryAfter = headers['retry-after'] ?? (seconds !== undefined && Number.isFinite(seconds) ? String(seconds) : undefined)
    return upstreamError(provider, 'rate_limit_exceeded', raw, { headers: retryAfter ? { 'retry-after': retryAfter } : undefined })
  }
  if (status === 401 || status === 403 || grpc === 'UNAUTHENTICATED' || grpc === 'PERMISSION_DENIED' || BAD_KEY.test(`${raw} ${reasons}`)) {
    return upstreamError(provider, 'authentication', raw)
  }
  if (status === 503 || grpc === 'UNAVAILABLE') return upstreamError(provider, 'provider_overloaded', raw)
  if (status === 504 || grpc === 'DEADLINE_EXCEEDED') return upstreamError(provider, 'timeout', raw)
  if (status >= 500) return upstreamError(provider, 'provider_unavailable', raw)
  if (CONTEXT_LENGTH.test(raw)) return upstreamError(provider, 'context_length_exceeded', raw)
  return upstreamError(provider, 'invalid_request', raw || `HTTP ${status}`)
}
