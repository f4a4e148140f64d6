import { fakeImage } from './openai-images'
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { handleGeminiEmbed } from './gemini-embeddings'
import { listenOnLoopback } from './listen'

/**
 * A fake Gemini API (`generativelanguage.googleapis.com`, v1beta) on 127.0.0.1, speaking the wire format of the API
 * reference (ai.google.dev/api/generate-content) and of `@google/genai`'s types:
 * - `POST /v1beta/models/{model}:generateContent` → a GenerateContentResponse;
 *   `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` → `data: <GenerateContentResponse>\r\n\r\n` events;
 *   `GET /v1beta/models` → the model list. The key must come in `x-goog-api-key` (none → 403 PERMISSION_DENIED,
 *   a wrong one → 400 INVALID_ARGUMENT "API key not valid", as the real API answers).
 * - The body is checked as the real API checks it, answering its 400 INVALID_ARGUMENT bodies: unknown fields
 *   ("Invalid JSON payload received. Unknown name …"), roles other than user / model, empty parts, parts with no or
 *   two data fields, a functionResponse.response that is not an object, function names, OpenAPI-only keywords in
 *   `parameters` (`additionalProperties`, `$schema`, … are rejected there; `parametersJsonSchema` takes JSON Schema),
 *   `parameters` with `parametersJsonSchema`, responseJsonSchema without JSON output, function call / response turn
 *   order and counts, thinkingLevel on models without it, both thinkingLevel and thinkingBudget, a budget of 0 for
 *   2.5 Pro, and for `gemini-3*` models the thought signature the first function call of each step of the current
 *   turn must carry back ("Function call is missing a thought_signature …").
 *
 * Answers: a function call per declared function (two functions → two parallel calls) unless toolConfig says NONE or
 * the last turn holds function responses; ids on calls only for `gemini-3*` models (2.5 models send none); thought
 * parts when thinkingConfig.includeThoughts; thought signatures on the first call (and on a closing empty text part)
 * when the model thinks; JSON for responseMimeType application/json (a sample of the schema); MAX_TOKENS when
 * maxOutputTokens cuts the words; logprobsResult with responseLogprobs; usageMetadata with thoughtsTokenCount and,
 * when the same systemInstruction was sent before to the same model (implicit caching), cachedContentTokenCount.
 * Otherwise the text is `Hello from <model>: <last user text>` plus ` [<mime>]` per media part of that turn; with
 * `responseModalities` including IMAGE, also one PNG (`fakeImage` of the user text) and 1,290 image tokens in
 * `candidatesTokensDetails`.
 *
 * Model names that fail: `fail-429` (RESOURCE_EXHAUSTED with RetryInfo 17s), `fail-503` (UNAVAILABLE), `fail-500`
 * (INTERNAL), `fail-400` (INVALID_ARGUMENT), `fail-context` (the input token count error), `fail-precondition`
 * (FAILED_PRECONDITION), `fail-401` (UNAUTHENTICATED), `fail-403` (PERMISSION_DENIED naming the key, as Google's
 * "Consumer 'api_key:…' has been suspended" does), `fail-midstream` (two text events, then an `{ error }` event),
 * `fail-blocked` (promptFeedback.blockReason, no candidates), `fail-recitation` (finishReason RECITATION, no content).
 * Any other name not starting with `gemini-` → 404 NOT_FOUND.
 *
 * Embeddings (`:embedContent`, `:batchEmbedContents`): see ./gemini-embeddings.ts.
 */
/** Image output tokens of the one image the fake answers when `responseModalities` asks for images. */
export const FAKE_GEMINI_IMAGE_TOKENS = 1290

export interface FakeGeminiRequest {
  method: string
  path: string
  query: Record<string, string>
  headers: IncomingMessage['headers']
  body: any
  /** The usageMetadata the fake answered with (the last one of a stream). */
  usage?: any
  /** The fake's error answer, if it refused the request. */
  error?: { code: number; message: string; status: string }
  /** The status the fake answered with; absent while it has not answered (an embedding call that hangs). */
  status?: number
}

export interface FakeGemini {
  /** The API root to give `gemini({ baseURL })`. */
  url: string
  requests: FakeGeminiRequest[]
  /** Thought signatures the fake handed out. */
  signatures: Set<string>
  /** Behaviours by model name taken one per embedding call, in order (`script['gemini-embedding-001'] = ['ok', 'fail-503']`). */
  script: Record<string, string[]>
  /**
   * Behaviours by text, taken one per embedding call that embeds that very text, before `script`
   * (`textScript['the last text'] = ['fail-503']` fails the one batch that holds it, once).
   */
  textScript: Record<string, string[]>
  /** Embedding calls (behaviour `hang`: never answered) whose client closed the connection. */
  aborted: number
  close(): Promise<void>
}

const SKIP_SIGNATURE = 'skip_thought_signature_validator'
const MODELS = ['gemini-3.5-flash', 'gemini-3.1-pro-preview', 'gemini-3-flash-preview', 'gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite']

const REQUEST_FIELDS = ['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings', 'cachedContent', 'serviceTier', 'store']
const CONTENT_FIELDS = ['role', 'parts']
const PART_DATA = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult']
const PART_FIELDS = [...PART_DATA, 'thought', 'thoughtSignature', 'videoMetadata', 'partMetadata', 'mediaResolution']
const GENERATION_FIELDS = [
  'stopSequences',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'responseModalities',
  'candidateCount',
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseLogprobs',
  'logprobs',
  'enableEnhancedCivicAnswers',
  'speechConfig',
  'thinkingConfig',
  'imageConfig',
  'mediaResolution',
]
const THINKING_FIELDS = ['includeThoughts', 'thinkingBudget', 'thinkingLevel']
const TOOL_FIELDS = ['functionDeclarations', 'googleSearch', 'codeExecution', 'urlContext']
const DECLARATION_FIELDS = ['name', 'description', 'behavior', 'parameters', 'parametersJsonSchema', 'response', 'responseJsonSchema']
// The OpenAPI 3.0 subset of `Schema` (FunctionDeclaration.parameters, GenerationConfig.responseSchema).
const OPENAPI_SCHEMA_FIELDS = [
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]

class Rejection extends Error {
  constructor(
    message: string,
    readonly code = 400,
    readonly status = 'INVALID_ARGUMENT',
  ) {
    super(message)
  }
}

const snake = (path: string) => path.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
const isObject = (value: unknown): value is Record<string, any> => typeof value === 'object' && value !== null && !Array.isArray(value)

function known(value: Record<string, unknown>, fields: string[], path: string) {
  for (const key of Object.keys(value)) {
    if (!fields.includes(key))
      throw new Rejection(`Invalid JSON payload received. Unknown name "${key}"${path ? ` at '${snake(path)}'` : ''}: Cannot find field.`)
  }
}

function checkOpenApiSchema(schema: unknown, path: string) {
  if (!isObject(schema)) throw new Rejection(`Invalid value at '${snake(path)}': expected a Schema object`)
  known(schema, OPENAPI_SCHEMA_FIELDS, path)
  for (const [name, property] of Object.entries(schema.properties ?? {})) checkOpenApiSchema(property, `${path}.properties[${JSON.stringify(name)}].value`)
  if (schema.items !== undefined) checkOpenApiSchema(schema.items, `${path}.items`)
  for (const [i, option] of (schema.anyOf ?? []).entries()) checkOpenApiSchema(option, `${path}.anyOf[${i}]`)
}

const isBase64 = (data: unknown) => typeof data === 'string' && data.length > 0 && /^[A-Za-z0-9+/_-]+={0,2}$/.test(data)
const usesLevels = (model: string) => model.startsWith('gemini-3')

/** Checks a request body as the real API would, throwing its 400 answer. */
function validate(body: any, model: string, signatures: Set<string>) {
  if (!isObject(body)) throw new Rejection('Invalid JSON payload received. Expected an object.')
  known(body, REQUEST_FIELDS, '')
  if (!Array.isArray(body.contents) || body.contents.length === 0) throw new Rejection('* GenerateContentRequest.contents: contents is not specified\n')
  const checkParts = (parts: unknown, path: string, role?: string) => {
    if (!Array.isArray(parts) || parts.length === 0) throw new Rejection(`* GenerateContentRequest.${path}: contents.parts must not be empty.\n`)
    for (const [j, part] of parts.entries()) {
      const at = `${path}[${j}]`
      if (!isObject(part)) throw new Rejection(`Invalid value at '${snake(at)}'`)
      known(part, PART_FIELDS, at)
      const data = PART_DATA.filter((field) => part[field] !== undefined)
      if (data.length === 0) throw new Rejection(`* GenerateContentRequest.${at}.data: required oneof field 'data' must have one initialized field\n`)
      if (data.length > 1) throw new Rejection(`Invalid value at '${snake(at)}' (oneof), oneof field 'data' is already set. Cannot set '${data[1]}'`)
      if (part.text !== undefined && typeof part.text !== 'string') throw new Rejection(`Invalid value at '${snake(at)}.text' (TYPE_STRING)`)
      if (part.inlineData) {
        known(part.inlineData, ['mimeType', 'data', 'displayName'], `${at}.inlineData`)
        if (!part.inlineData.mimeType) throw new Rejection(`* GenerateContentRequest.${at}.inline_data.mime_type: required field is not set\n`)
        if (!isBase64(part.inlineData.data)) throw new Rejection(`Invalid value at '${snake(at)}.inline_data.data' (TYPE_BYTES), Base64 decoding failed`)
      }
      if (part.fileData) {
        known(part.fileData, ['mimeType', 'fileUri', 'displayName'], `${at}.fileData`)
        if (!/^https?:\/\//.test(part.fileData.fileUri ?? ''))
          throw new Rejection(`* GenerateContentRequest.${at}.file_data.file_uri: Invalid or unsupported file uri: ${part.fileData.fileUri}\n`)
        if (!part.fileData.mimeType) throw new Rejection(`* GenerateContentRequest.${at}.file_data.mime_type: required field is not set\n`)
      }
      if (part.functionCall) {
        known(part.functionCall, ['id', 'name', 'args'], `${at}.functionCall`)
        if (role !== 'model') throw new Rejection('Please ensure that function call turns come from the model.')
        if (!part.functionCall.name) throw new Rejection(`* GenerateContentRequest.${at}.function_call.name: Name cannot be empty.\n`)
        if (part.functionCall.args !== undefined && !isObject(part.functionCall.args))
          throw new Rejection(
            `Invalid value at '${snake(at)}.function_call.args' (type.googleapis.com/google.protobuf.Struct), ${JSON.stringify(part.functionCall.args)}`,
          )
      }
      if (part.functionResponse) {
        known(part.functionResponse, ['id', 'name', 'response', 'parts', 'willContinue', 'scheduling'], `${at}.functionResponse`)
        if (!part.functionResponse.name) throw new Rejection(`* GenerateContentRequest.${at}.function_response.name: Name cannot be empty.\n`)
        if (!isObject(part.functionResponse.response))
          throw new Rejection(
            `Invalid value at '${snake(at)}.function_response.response' (type.googleapis.com/google.protobuf.Struct), ${JSON.stringify(part.functionResponse.response)}`,
          )
      }
    }
  }
  for (const [i, content] of body.contents.entries()) {
    if (!isObject(content)) throw new Rejection(`Invalid value at 'contents[${i}]'`)
    known(content, CONTENT_FIELDS, `contents[${i}]`)
    if (content.role !== 'user' && content.role !== 'model') throw new Rejection('Please use a valid role: user, model.')
    checkParts(content.parts, `contents[${i}].parts`, content.role)
  }
  if (body.systemInstruction !== undefined) {
    if (!isObject(body.systemInstruction)) throw new Rejection("Invalid value at 'system_instruction'")
    known(body.systemInstruction, CONTENT_FIELDS, 'systemInstruction')
    checkParts(body.systemInstruction.parts, 'systemInstruction.parts')
  }

  // Function call and response turns: order and counts.
  for (const [i, content] of body.contents.entries()) {
    const calls = content.parts.filter((p: any) => p.functionCall)
    const responses = content.parts.filter((p: any) => p.functionResponse)
    const previous = body.contents[i - 1]
    if (calls.length && previous && previous.role !== 'user') {
      throw new Rejection('Please ensure that function call turn comes immediately after a user turn or after a function response turn.')
    }
    if (responses.length) {
      const previousCalls = previous?.role === 'model' ? previous.parts.filter((p: any) => p.functionCall) : []
      if (!previousCalls.length) throw new Rejection('Please ensure that function response turn comes immediately after a function call turn.')
      if (previousCalls.length !== responses.length) {
        throw new Rejection('Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.')
      }
      const names = previousCalls
        .map((p: any) => p.functionCall.name)
        .sort()
        .join()
      if (
        responses
          .map((p: any) => p.functionResponse.name)
          .sort()
          .join() !== names
      ) {
        throw new Rejection('Please ensure that the function response names match the function call names of the function call turn.')
      }
    }
  }

  // Gemini 3: each step of the current turn (since the last user turn that is not function responses) needs the
  // signature of its first function call back.
  if (usesLevels(model)) {
    let start = 0
    body.contents.forEach((content: any, i: number) => {
      if (content.role === 'user' && !content.parts.every((p: any) => p.functionResponse)) start = i
    })
    for (const [i, content] of body.contents.entries()) {
      if (i < start || content.role !== 'model') continue
      const first = content.parts.find((p: any) => p.functionCall)
      if (!first) continue
      const position = content.parts.indexOf(first) + 1
      if (!first.thoughtSignature || (first.thoughtSignature !== SKIP_SIGNATURE && !signatures.has(first.thoughtSignature))) {
        throw new Rejection(
          `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${first.functionCall.name}\` , position ${position}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
        )
      }
    }
  }

  const declared: string[] = []
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) throw new Rejection("Invalid value at 'tools'")
    for (const [i, tool] of body.tools.entries()) {
      known(tool, TOOL_FIELDS, `tools[${i}]`)
      for (const [j, declaration] of (tool.functionDeclarations ?? []).entries()) {
        const at = `tools[${i}].functionDeclarations[${j}]`
        known(declaration, DECLARATION_FIELDS, at)
        if (typeof declaration.name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/.test(declaration.name)) {
          throw new Rejection(
            `* GenerateContentRequest.${snake(at)}.name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.\n`,
          )
        }
        if (declaration.parameters !== undefined && declaration.parametersJsonSchema !== undefined) {
          throw new Rejection(`* GenerateContentRequest.${snake(at)}: parameters and parameters_json_schema are mutually exclusive.\n`)
        }
        if (declaration.parameters !== undefined) checkOpenApiSchema(declaration.parameters, `${at}.parameters`)
        if (declaration.parametersJsonSchema !== undefined) {
          const schema = declaration.parametersJsonSchema
          if (!isObject(schema) || schema.type !== 'object')
            throw new Rejection(`* GenerateContentRequest.${snake(at)}.parameters_json_schema: the schema must describe an object.\n`)
        }
        declared.push(declaration.name)
      }
    }
  }
  if (body.toolConfig !== undefined) {
    known(body.toolConfig, ['functionCallingConfig', 'retrievalConfig', 'includeServerSideToolInvocations'], 'toolConfig')
    const config = body.toolConfig.functionCallingConfig ?? {}
    known(config, ['mode', 'allowedFunctionNames'], 'toolConfig.functionCallingConfig')
    if (!['AUTO', 'ANY', 'NONE', 'VALIDATED', undefined].includes(config.mode))
      throw new Rejection(
        `Invalid value at 'tool_config.function_calling_config.mode' (type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode), "${config.mode}"`,
      )
    if (config.allowedFunctionNames) {
      if (config.mode !== 'ANY' && config.mode !== 'VALIDATED')
        throw new Rejection(
          '* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: allowed_function_names should only be set when the mode is ANY.\n',
        )
      for (const name of config.allowedFunctionNames)
        if (!declared.includes(name))
          throw new Rejection(`* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: function ${name} is not declared.\n`)
    }
  }

  const config = body.generationConfig
  if (config !== undefined) {
    known(config, GENERATION_FIELDS, 'generationConfig')
    if (config.candidateCount !== undefined && config.candidateCount < 1)
      throw new Rejection('* GenerateContentRequest.generation_config.candidate_count: must be positive.\n')
    if ((config.stopSequences ?? []).length > 5)
      throw new Rejection('* GenerateContentRequest.generation_config.stop_sequences: at most 5 stop sequences are allowed.\n')
    if (config.responseSchema !== undefined && config.responseJsonSchema !== undefined)
      throw new Rejection('* GenerateContentRequest.generation_config: response_schema and response_json_schema are mutually exclusive.\n')
    if ((config.responseSchema !== undefined || config.responseJsonSchema !== undefined) && config.responseMimeType !== 'application/json') {
      throw new Rejection('* GenerateContentRequest.generation_config.response_mime_type: a response schema needs response_mime_type application/json.\n')
    }
    if (config.responseSchema !== undefined) checkOpenApiSchema(config.responseSchema, 'generationConfig.responseSchema')
    if (config.logprobs !== undefined && !config.responseLogprobs)
      throw new Rejection('* GenerateContentRequest.generation_config.logprobs: logprobs needs response_logprobs.\n')
    const thinking = config.thinkingConfig
    if (thinking !== undefined) {
      known(thinking, THINKING_FIELDS, 'generationConfig.thinkingConfig')
      if (thinking.thinkingLevel !== undefined && thinking.thinkingBudget !== undefined)
        throw new Rejection('* GenerateContentRequest.generation_config.thinking_config: thinking_budget and thinking_level cannot both be set.\n')
      if (thinking.thinkingLevel !== undefined && !usesLevels(model)) throw new Rejection('Thinking level is not supported for this model.')
      if (thinking.thinkingLevel !== undefined && !['MINIMAL', 'LOW', 'MEDIUM', 'HIGH'].includes(thinking.thinkingLevel))
        throw new Rejection(`Invalid value at 'generation_config.thinking_config.thinking_level', "${thinking.thinkingLevel}"`)
      if (thinking.thinkingBudget === 0 && (model === 'gemini-2.5-pro' || usesLevels(model)))
        throw new Rejection('Budget 0 is invalid. This model only works in thinking mode.')
    }
  }
}

function sampleFromSchema(schema: any, hint: string): unknown {
  if (!isObject(schema)) return hint
  if (Array.isArray(schema.anyOf)) return sampleFromSchema(schema.anyOf.find((s: any) => s.type !== 'null') ?? schema.anyOf[0], hint)
  const type = Array.isArray(schema.type)
    ? schema.type.find((t: string) => t !== 'null')
    : String(schema.type ?? (schema.properties ? 'object' : 'string')).toLowerCase()
  if (schema.enum) return schema.enum[0]
  if (type === 'object') {
    const out: Record<string, unknown> = {}
    for (const [name, property] of Object.entries(schema.properties ?? {})) out[name] = sampleFromSchema(property, hint)
    return out
  }
  if (type === 'array') return [sampleFromSchema(schema.items, hint)]
  if (type === 'number' || type === 'integer') return 42
  if (type === 'boolean') return true
  return hint
}

const tokens = (text: string) => Math.ceil(text.length / 4)
const words = (text: string) => text.split(/\s+/).filter(Boolean)
const newSignature = () => `sig_${randomBytes(18).toString('base64url')}`

interface Plan {
  thought?: string
  parts: any[]
  finishReason: string
  usage: Record<string, any>
  logprobs?: any
}

/** What the fake model answers to a valid request. */
function planAnswer(body: any, model: string, signatures: Set<string>, seenSystems: Set<string>): Plan {
  const contents: any[] = body.contents
  const config = body.generationConfig ?? {}
  const thinking = config.thinkingConfig ?? {}
  const lastUser = [...contents].reverse().find((c) => c.role === 'user' && c.parts.some((p: any) => !p.functionResponse))
  const userText = (lastUser?.parts ?? [])
    .filter((p: any) => typeof p.text === 'string')
    .map((p: any) => p.text)
    .join(' ')
  const media = (lastUser?.parts ?? [])
    .filter((p: any) => p.inlineData || p.fileData)
    .map((p: any) => ` [${(p.inlineData ?? p.fileData).mimeType}]`)
    .join('')
  const last = contents.at(-1)
  const responses = last.role === 'user' ? last.parts.filter((p: any) => p.functionResponse).map((p: any) => p.functionResponse) : []
  const thinks =
    thinking.thinkingBudget !== 0 &&
    (usesLevels(model) || model === 'gemini-2.5-pro' || model === 'gemini-2.5-flash' || thinking.thinkingBudget > 0 || thinking.thinkingLevel)
  const signs = thinks && (usesLevels(model) || thinking.includeThoughts)

  // Prompt tokens: text (media data left out) + 258 per image + 100 per audio clip; cached: a systemInstruction seen before.
  const inputs = [...contents, ...(body.systemInstruction ? [body.systemInstruction] : [])].flatMap((c) => c.parts)
  const mediaMime = inputs.map((p: any) => (p.inlineData ?? p.fileData)?.mimeType).filter(Boolean) as string[]
  const textual = JSON.stringify({ contents, systemInstruction: body.systemInstruction, tools: body.tools }, (key, value) => (key === 'data' ? '' : value))
  const imageTokens = 258 * mediaMime.filter((m) => m.startsWith('image/')).length
  const audioTokens = 100 * mediaMime.filter((m) => m.startsWith('audio/')).length
  const promptTokenCount = tokens(textual) + imageTokens + audioTokens
  const systemKey = body.systemInstruction ? `${model}\n${JSON.stringify(body.systemInstruction)}` : undefined
  const cached = systemKey && seenSystems.has(systemKey) ? tokens(JSON.stringify(body.systemInstruction)) : 0
  if (systemKey) seenSystems.add(systemKey)

  const parts: any[] = []
  let finishReason = 'STOP'
  let candidates = 0
  let imageOutput = 0
  const declarations: any[] = (body.tools ?? []).flatMap((t: any) => t.functionDeclarations ?? [])
  const calling = body.toolConfig?.functionCallingConfig ?? {}
  if (declarations.length && calling.mode !== 'NONE' && !responses.length) {
    const allowed: string[] | undefined = calling.allowedFunctionNames
    const chosen = allowed ? declarations.filter((d) => allowed.includes(d.name)) : declarations
    for (const [i, declaration] of chosen.entries()) {
      const args = sampleFromSchema(declaration.parametersJsonSchema ?? declaration.parameters, userText)
      const part: any = { functionCall: { ...(usesLevels(model) ? { id: `fc_${randomBytes(6).toString('hex')}` } : {}), name: declaration.name, args } }
      if (i === 0 && signs) {
        part.thoughtSignature = newSignature()
        signatures.add(part.thoughtSignature)
      }
      parts.push(part)
      candidates += tokens(JSON.stringify(args)) + 3
    }
  } else {
    let text: string
    if (responses.length) text = `The tools said: ${responses.map((r: any) => `${r.name}=${JSON.stringify(r.response)}`).join('; ')}`
    else if (config.responseMimeType === 'application/json')
      text = JSON.stringify(
        (config.responseJsonSchema ?? config.responseSchema)
          ? sampleFromSchema(config.responseJsonSchema ?? config.responseSchema, userText)
          : { text: userText },
      )
    else text = `Hello from ${model}: ${userText}${media}`
    let pieces = config.responseMimeType === 'application/json' ? [text] : words(text)
    if (config.maxOutputTokens && pieces.length > config.maxOutputTokens) {
      pieces = pieces.slice(0, config.maxOutputTokens)
      finishReason = 'MAX_TOKENS'
    }
    parts.push({ text: pieces.join(' ') })
    candidates += pieces.length
    // An image model asked for images (`responseModalities` with IMAGE): one PNG, 1,290 image tokens (Google's count for 1024x1024).
    if (Array.isArray(config.responseModalities) && config.responseModalities.includes('IMAGE')) {
      parts.push({ inlineData: { mimeType: 'image/png', data: fakeImage(userText, 0).toString('base64') } })
      imageOutput = FAKE_GEMINI_IMAGE_TOKENS
    }
    if (signs) {
      const signature = newSignature()
      signatures.add(signature)
      parts.push({ text: '', thoughtSignature: signature })
    }
  }
  const thoughtsTokenCount = thinks ? 16 : 0
  const usage: Record<string, any> = {
    promptTokenCount,
    candidatesTokenCount: candidates + imageOutput,
    totalTokenCount: promptTokenCount + candidates + imageOutput + thoughtsTokenCount,
    ...(imageOutput
      ? {
          candidatesTokensDetails: [
            { modality: 'TEXT', tokenCount: candidates },
            { modality: 'IMAGE', tokenCount: imageOutput },
          ],
        }
      : {}),
    promptTokensDetails: [
      { modality: 'TEXT', tokenCount: tokens(textual) },
      ...(imageTokens ? [{ modality: 'IMAGE', tokenCount: imageTokens }] : []),
      ...(audioTokens ? [{ modality: 'AUDIO', tokenCount: audioTokens }] : []),
    ],
    ...(thoughtsTokenCount ? { thoughtsTokenCount } : {}),
    ...(cached ? { cachedContentTokenCount: cached } : {}),
  }
  const answerText = parts.map((p) => p.text ?? '').join('')
  const logprobs = config.responseLogprobs
    ? {
        topCandidates: words(answerText).map((word, i) => ({
          candidates: Array.from({ length: config.logprobs ?? 0 }, (_, k) => ({
            token: k ? `${word}~${k}` : word,
            tokenId: i * 10 + k,
            logProbability: -0.5 * (i + 1) - k,
          })),
        })),
        chosenCandidates: words(answerText).map((word, i) => ({ token: word, tokenId: i * 10, logProbability: -0.5 * (i + 1) })),
      }
    : undefined
  return { thought: thinks && thinking.includeThoughts ? `Thinking about "${userText}"` : undefined, parts, finishReason, usage, logprobs }
}

const ERRORS: Record<string, [number, string, string, any[]?]> = {
  'fail-429': [
    429,
    'RESOURCE_EXHAUSTED',
    'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.',
    [
      {
        '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
        violations: [
          {
            quotaMetric: 'generativelanguage.googleapis.com/generate_content_paid_tier_input_token_count',
            quotaId: 'GenerateContentPaidTierInputTokensPerModelPerMinute',
          },
        ],
      },
      {
        '@type': 'type.googleapis.com/google.rpc.Help',
        links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }],
      },
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '16.5s' },
    ],
  ],
  'fail-503': [503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'],
  'fail-500': [500, 'INTERNAL', 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting'],
  'fail-400': [400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.'],
  'fail-context': [400, 'INVALID_ARGUMENT', 'The input token count (1250000) exceeds the maximum number of tokens allowed (1048576).'],
  'fail-precondition': [400, 'FAILED_PRECONDITION', 'User location is not supported for the API use.'],
  'fail-401': [
    401,
    'UNAUTHENTICATED',
    'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
  ],
}

// The next behaviour `textScript` gives an embedding call that embeds one of its texts.
function textBehaviour(textScript: Record<string, string[]>, body: any): string | undefined {
  const contents = Array.isArray(body?.requests) ? body.requests.map((r: any) => r?.content) : [body?.content]
  for (const content of contents)
    for (const part of Array.isArray(content?.parts) ? content.parts : []) {
      const next = typeof part?.text === 'string' ? textScript[part.text]?.shift() : undefined
      if (next) return next
    }
  return undefined
}

/** Starts the fake on a free port of 127.0.0.1; requests must carry `apiKey`. */
export async function startFakeGemini(options: { apiKey: string }): Promise<FakeGemini> {
  const signatures = new Set<string>()
  const seenSystems = new Set<string>()
  const fake: FakeGemini = { url: '', requests: [], signatures, script: {}, textScript: {}, aborted: 0, close: async () => undefined }

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks).toString('utf8')
    const url = new URL(req.url ?? '/', 'http://fake')
    const record: FakeGeminiRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body: undefined,
    }
    fake.requests.push(record)
    const json = (status: number, value: unknown) => {
      record.status = status
      res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', vary: 'Origin, X-Origin, Referer' })
      res.end(JSON.stringify(value))
    }
    const fail = (code: number, status: string, message: string, details?: any[]) => {
      record.error = { code, message, status }
      json(code, { error: { code, message, status, ...(details ? { details } : {}) } })
    }
    try {
      record.body = raw ? JSON.parse(raw) : undefined
    } catch {
      return fail(400, 'INVALID_ARGUMENT', `Invalid JSON payload received. Unexpected token.\n${raw.slice(0, 20)}\n^`)
    }

    const key = req.headers['x-goog-api-key']
    if (!key)
      return fail(
        403,
        'PERMISSION_DENIED',
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      )
    if (key !== options.apiKey) {
      return fail(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'API_KEY_INVALID',
          domain: 'googleapis.com',
          metadata: { service: 'generativelanguage.googleapis.com' },
        },
        { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: 'API key not valid. Please pass a valid API key.' },
      ])
    }

    if (req.method === 'GET' && url.pathname === '/v1beta/models') {
      return json(200, {
        models: MODELS.map((name) => ({
          name: `models/${name}`,
          version: '001',
          displayName: name,
          inputTokenLimit: 1_048_576,
          outputTokenLimit: 65_536,
          supportedGenerationMethods: ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'],
          thinking: true,
        })),
      })
    }
    const embed = /^\/v1beta\/models\/([^/:]+):(embedContent|batchEmbedContents)$/.exec(url.pathname)
    if (req.method === 'POST' && embed) {
      const model = decodeURIComponent(embed[1])
      const behaviour = textBehaviour(fake.textScript, record.body) ?? fake.script[model]?.shift() ?? model
      if (behaviour === 'hang') {
        res.on('close', () => fake.aborted++)
        return
      }
      return handleGeminiEmbed({
        model,
        method: embed[2] as 'embedContent' | 'batchEmbedContents',
        body: record.body,
        behaviour,
        json,
        fail,
        errors: ERRORS,
        apiKey: options.apiKey,
      })
    }
    const route = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(url.pathname)
    if (req.method !== 'POST' || !route) return fail(404, 'NOT_FOUND', `The requested URL ${url.pathname} was not found on this server.`)
    const model = decodeURIComponent(route[1])
    const stream = route[2] === 'streamGenerateContent'
    if (stream && url.searchParams.get('alt') !== 'sse') return fail(400, 'INVALID_ARGUMENT', 'fake: only streamGenerateContent?alt=sse is implemented')

    if (ERRORS[model]) return fail(...ERRORS[model])
    if (model === 'fail-403') return fail(403, 'PERMISSION_DENIED', `Permission denied: Consumer 'api_key:${options.apiKey}' has been suspended.`)
    if (!model.startsWith('gemini-') && !model.startsWith('fail-')) {
      return fail(
        404,
        'NOT_FOUND',
        `models/${model} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`,
      )
    }
    try {
      validate(record.body, model, signatures)
    } catch (error) {
      if (error instanceof Rejection) return fail(error.code, error.status, error.message)
      throw error
    }

    const responseId = randomBytes(12).toString('base64url')
    const envelope = (value: Record<string, unknown>) => ({ ...value, modelVersion: model, responseId })
    if (model === 'fail-blocked') {
      record.usage = { promptTokenCount: 9, totalTokenCount: 9 }
      const answer = envelope({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: record.usage })
      if (!stream) return json(200, answer)
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      return res.end(`data: ${JSON.stringify(answer)}\r\n\r\n`)
    }
    if (model === 'fail-recitation') {
      record.usage = { promptTokenCount: 9, candidatesTokenCount: 0, totalTokenCount: 9 }
      return json(200, envelope({ candidates: [{ finishReason: 'RECITATION', index: 0 }], usageMetadata: record.usage }))
    }

    const plan = planAnswer(record.body, model, signatures, seenSystems)
    record.usage = plan.usage
    const candidate = (parts: any[], extra: Record<string, unknown> = {}) => ({ content: { parts, role: 'model' }, index: 0, ...extra })
    if (!stream) {
      const parts = plan.thought ? [{ text: plan.thought, thought: true }, ...plan.parts] : plan.parts
      return json(
        200,
        envelope({
          candidates: [candidate(parts, { finishReason: plan.finishReason, ...(plan.logprobs ? { logprobsResult: plan.logprobs, avgLogprobs: -0.5 } : {}) })],
          usageMetadata: plan.usage,
        }),
      )
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' })
    const send = (value: Record<string, unknown>) => res.write(`data: ${JSON.stringify(envelope(value))}\r\n\r\n`)
    const running = {
      promptTokenCount: plan.usage.promptTokenCount,
      totalTokenCount: plan.usage.promptTokenCount,
      promptTokensDetails: plan.usage.promptTokensDetails,
    }
    if (plan.thought) send({ candidates: [candidate([{ text: plan.thought, thought: true }])], usageMetadata: running })
    if (plan.parts.some((p) => p.functionCall)) {
      send({ candidates: [candidate(plan.parts, { finishReason: plan.finishReason })], usageMetadata: plan.usage })
      return res.end()
    }
    const [text, ...closing] = plan.parts
    const pieces = text.text.match(/\S+\s*/g) ?? ['']
    for (const [i, piece] of pieces.entries()) {
      if (model === 'fail-midstream' && i === 2) {
        res.write(
          `data: ${JSON.stringify({ error: { code: 500, message: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting', status: 'INTERNAL' } })}\r\n\r\n`,
        )
        return res.end()
      }
      const lastPiece = i === pieces.length - 1 && !closing.length
      const logprobs = plan.logprobs && {
        topCandidates: plan.logprobs.topCandidates.slice(i, i + 1),
        chosenCandidates: plan.logprobs.chosenCandidates.slice(i, i + 1),
      }
      send({
        candidates: [
          candidate([{ text: piece }], { ...(lastPiece ? { finishReason: plan.finishReason } : {}), ...(logprobs ? { logprobsResult: logprobs } : {}) }),
        ],
        usageMetadata: lastPiece ? plan.usage : running,
      })
    }
    if (closing.length) send({ candidates: [candidate(closing, { finishReason: plan.finishReason })], usageMetadata: plan.usage })
    res.end()
  })
  const listening = await listenOnLoopback(server)
  fake.url = `${listening.origin}`
  fake.close = listening.close
  return fake
}

export { fakeEmbedding } from './embedding-vector'
export { FAKE_GEMINI_EMBEDDING_DIMENSIONS } from './gemini-embeddings'
