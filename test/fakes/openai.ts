import { answeredError, behaviourOf } from './behaviour'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { handleAudio } from './openai-audio'
import { handleEmbeddings } from './openai-embeddings'
import { handleImages } from './openai-images'
import { handleResponses } from './openai-responses'
import { listenOnLoopback } from './listen'

/**
 * A fake OpenAI-compatible upstream on 127.0.0.1 that speaks OpenAI's chat completions wire format
 * (as in OpenAI's API reference): whole answers, SSE chunks with `stream_options.include_usage`, tool calls with
 * streamed argument deltas, logprobs, usage details, and OpenAI's error bodies.
 *
 * The model name picks a behaviour:
 * - `fail-400`, `fail-401`, `fail-429`, `fail-500`, `fail-503`: that HTTP error with OpenAI's error body;
 * - `fail-malformed`: 200 with a body that is not a completion; `fail-badjson`: 200 with broken JSON (or a broken SSE event);
 * - `fail-reset`: the connection is destroyed; `hang`: no answer at all;
 * - `fail-midstream`: streams two content chunks (or half a whole body), then destroys the connection;
 * - `slow`: waits `slowMs` before each chunk (and before a whole answer);
 * - `think`: a reasoning model's stream: the role chunk, then `slowMs` of silent reasoning, then `Done.` and usage of
 *   20,015 completion tokens, 20,000 of them reasoning;
 * - `cached` / `reasoning` in the name: usage reports cached prompt tokens / reasoning tokens;
 * - `refuse`: a refusal, as OpenAI's models refuse: `content: null, refusal: REFUSAL` (streamed as `delta.refusal`
 *   pieces, one a word; with `logprobs: true` the logprobs are `logprobs.refusal`'s); `refuse-after-text`: the
 *   content `Let me see.` (streamed first), then that refusal.
 * Tools OpenAI's chat API refuses (chatToolsRefusal) are a 400 with its error body.
 * Otherwise: a tool call when tools are given (and tool_choice is not `none`; the tool of `toolCalls` alone when one
 * is named there; none with `ignoreTools`), JSON matching a `json_schema`
 * response format, a reply to a tool result, or `Hello from <model>: <last user text>`.
 * `POST /v1/embeddings`: see ./openai-embeddings.ts (vectors from `fakeEmbedding`, the same failure modes).
 * `POST /v1/images/generations`: see ./openai-images.ts (base64 PNGs with gpt-image-1's token usage, the same failure modes).
 * `POST /v1/responses`: see ./openai-responses.ts (OpenAI's Responses API, whole and streamed, the same failure modes).
 */
export interface FakeOpenAI {
  url: string
  /** Every request received, in order (audio: `sent` holds the audio bytes answered; see ./openai-audio.ts). */
  requests: { method: string; path: string; headers: IncomingMessage['headers']; body: any; sent?: Buffer }[]
  /** Chat requests whose connection the client closed before the answer ended. */
  aborted: number
  slowMs: number
  /** When set, `slow` also waits for it before answering (a test holds answers back until it has seen what it waits for). */
  slowGate?: Promise<void>
  /** Every chat answer waits this long before its first byte (0: at once), as a model's time to first token. */
  latencyMs: number
  /** Behaviour by upstream model name, set at run time (e.g. `modes.flaky = 'fail-500'`); the model name otherwise. */
  modes: Record<string, string>
  /** Behaviour by API key (the bearer token), e.g. `keyModes['sk-bad'] = 'fail-429'`; checked before `modes`. */
  keyModes: Record<string, string>
  /** Behaviours by upstream model name taken one per chat or embeddings request, in order, before anything else (`script.m = ['fail-503', 'fail-503']`). */
  script: Record<string, string[]>
  /** Behaviour when the last user message contains the text (`promptModes['poison'] = 'fail-500'`); checked after `keyModes`. */
  promptModes: Record<string, string>
  /**
   * The tool call to answer when the last user message contains the key (`promptTools['run echo'] = { name: 'Bash',
   * input: { command: 'echo hi' } }`), instead of one call per tool; null answers text.
   */
  promptTools: Record<string, { name: string; input: Record<string, unknown> } | null>
  /** The Retry-After header of 429 and 503 answers: a value, null for none; undefined keeps OpenAI's (`2` on a 429). */
  retryAfter: string | null | undefined
  /**
   * Tool calls by tool name: a chat or Responses request declaring a tool of that name (a Responses namespace's tool
   * included) gets a call of that tool alone, with these arguments (JSON text), instead of calls with sampled ones.
   */
  toolCalls: Record<string, string>
  /** When true, a chat or Responses request with tools is answered with text, as if it had none. */
  ignoreTools: boolean
  /** When each chat or embeddings request arrived (performance.now()), in order. */
  arrivals: number[]
  /** Audio: a speech in `hold` mode waits on this after its first chunk; `releaseAudio()` lets it go on. */
  audioGate(): Promise<void>
  releaseAudio(): void
  close(): Promise<void>
}

const words = (text: string) => text.split(/\s+/).filter(Boolean)
const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((p: any) => p.text ?? '').join(' ') : ''

export function sampleFromSchema(schema: any, hint: string): unknown {
  if (!schema || typeof schema !== 'object') return hint
  if (schema.type === 'object' || schema.properties) {
    const out: Record<string, unknown> = {}
    for (const [name, property] of Object.entries(schema.properties ?? {})) out[name] = sampleFromSchema(property, hint)
    return out
  }
  if (schema.enum) return schema.enum[0]
  if (schema.type === 'array') return [sampleFromSchema(schema.items, hint)]
  if (schema.type === 'number' || schema.type === 'integer') return 42
  if (schema.type === 'boolean') return true
  return hint
}

/** The refusal of the `refuse` modes. */
export const REFUSAL = 'I can’t help with that.'
/** The text the `refuse-after-text` mode streams before its refusal. */
export const TEXT_BEFORE_REFUSAL = 'Let me see.'

interface Plan {
  content: string | null
  refusal?: string
  toolCalls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[]
  finish: string
  usage: Record<string, any>
}

/**
 * What OpenAI's chat API refuses in `tools` (its API reference: a tool is `{ type: "function", function: { name,
 * description?, parameters?, strict? } }` or `{ type: "custom", custom: { name, … } }`, a name 1–64 letters, digits,
 * `_` or `-`): OpenAI's 400 body, or undefined when the tools are valid.
 */
export function chatToolsRefusal(tools: unknown): Record<string, unknown> | undefined {
  if (tools === undefined) return undefined
  const invalid = (message: string, param: string, code: string) => ({ error: { message, type: 'invalid_request_error', param, code } })
  if (!Array.isArray(tools)) return invalid(`Invalid type for 'tools': expected an array, but got ${typeof tools} instead.`, 'tools', 'invalid_type')
  for (const [i, tool] of tools.entries()) {
    if (tool?.type !== 'function' && tool?.type !== 'custom')
      return invalid(`Invalid value: '${tool?.type}'. Supported values are: 'function' and 'custom'.`, `tools[${i}].type`, 'invalid_value')
    const name = tool.type === 'function' ? tool.function?.name : tool.custom?.name
    if (typeof name !== 'string')
      return invalid(`Missing required parameter: 'tools[${i}].${tool.type}.name'.`, `tools[${i}].${tool.type}.name`, 'missing_required_parameter')
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name))
      return invalid(
        `Invalid 'tools[${i}].${tool.type}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
        `tools[${i}].${tool.type}.name`,
        'invalid_value',
      )
  }
  return undefined
}

function planAnswer(body: any, mode: string, toolCalls: Record<string, string> = {}, ignoreTools = false, promptTools: FakeOpenAI['promptTools'] = {}): Plan {
  const messages: any[] = body.messages ?? []
  const last = messages[messages.length - 1] ?? {}
  const lastUser = [...messages].reverse().find((m) => m.role === 'user')
  const userText = textOf(lastUser?.content)
  const promptTokens = Math.ceil(JSON.stringify(messages).length / 4)
  const model: string = body.model
  const usage = (completion: number) => ({
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
    prompt_tokens_details: { cached_tokens: model.includes('cached') ? Math.floor(promptTokens / 2) : 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: model.includes('reasoning') ? 7 : 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  })
  if (mode === 'refuse' || mode === 'refuse-after-text') {
    const content = mode === 'refuse' ? null : TEXT_BEFORE_REFUSAL
    return { content, refusal: REFUSAL, finish: 'stop', usage: usage(words(`${content ?? ''} ${REFUSAL}`).length) }
  }
  const tools: any[] = ignoreTools ? [] : (body.tools ?? [])
  const byPrompt = Object.entries(promptTools).find(([text]) => userText.includes(text))
  if (byPrompt && last.role !== 'tool' && byPrompt[1] && tools.some((t) => t.function?.name === byPrompt[1]?.name)) {
    const arguments_ = JSON.stringify(byPrompt[1].input)
    const calls = [{ id: `call_fake0${promptTokens}`, type: 'function' as const, function: { name: byPrompt[1].name, arguments: arguments_ } }]
    return { content: null, toolCalls: calls, finish: 'tool_calls', usage: usage(Math.ceil(arguments_.length / 4)) }
  }
  const scripted = tools.find((t) => toolCalls[t.function?.name] !== undefined)
  if (scripted && body.tool_choice !== 'none' && last.role !== 'tool') {
    const args = toolCalls[scripted.function.name]
    const calls = [{ id: `call_fake0${promptTokens}`, type: 'function' as const, function: { name: scripted.function.name, arguments: args } }]
    return { content: null, toolCalls: calls, finish: 'tool_calls', usage: usage(Math.ceil(args.length / 4)) }
  }
  if (tools.length && body.tool_choice !== 'none' && last.role !== 'tool' && !byPrompt) {
    const named = typeof body.tool_choice === 'object' ? body.tool_choice.function.name : undefined
    const chosen = named ? [tools.find((t) => t.function.name === named)] : body.parallel_tool_calls === false ? tools.slice(0, 1) : tools
    const toolCalls = chosen.map((tool, i) => ({
      id: `call_fake${i}${promptTokens}`,
      type: 'function' as const,
      function: { name: tool.function.name, arguments: JSON.stringify(sampleFromSchema(tool.function.parameters, userText)) },
    }))
    return { content: null, toolCalls, finish: 'tool_calls', usage: usage(toolCalls.reduce((n, c) => n + Math.ceil(c.function.arguments.length / 4), 0)) }
  }
  let content: string
  if (body.response_format?.type === 'json_schema') content = JSON.stringify(sampleFromSchema(body.response_format.json_schema.schema, userText))
  else if (body.response_format?.type === 'json_object') content = JSON.stringify({ text: userText })
  else if (last.role === 'tool') content = `The tool said: ${textOf(last.content)}`
  else content = `Hello from ${model}: ${userText}`
  let pieces = words(content)
  const max = body.max_completion_tokens ?? body.max_tokens
  let finish = 'stop'
  if (max && pieces.length > max) {
    pieces = pieces.slice(0, max)
    content = pieces.join(' ')
    finish = 'length'
  }
  return { content, finish, usage: usage(pieces.length) }
}

/** The logprobs the fake answers for a text when asked (`logprobs: true`), in chat's shape: one entry a word (a streamed chunk: its word's). */
export const logprobsFor = (text: string) =>
  words(text).map((token, i) => ({
    token,
    logprob: -0.25 * (i + 1),
    bytes: [...Buffer.from(token)],
    top_logprobs: [{ token, logprob: -0.25 * (i + 1), bytes: [...Buffer.from(token)] }],
  }))

const ERRORS: Record<string, [number, any, Record<string, string>?]> = {
  'fail-400': [
    400,
    { error: { message: "Invalid value for 'temperature': must be at most 2.", type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' } },
  ],
  'fail-401': [
    401,
    {
      error: {
        message: 'Incorrect API key provided: sk-fake***. You can find your API key at https://platform.openai.com/account/api-keys.',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
      },
    },
  ],
  'fail-429': [
    429,
    { error: { message: 'Rate limit reached for requests. Please try again in 2s.', type: 'requests', param: null, code: 'rate_limit_exceeded' } },
    { 'retry-after': '2', 'x-ratelimit-remaining-requests': '0' },
  ],
  'fail-500': [
    500,
    { error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null } },
  ],
  'fail-503': [503, { error: { message: 'The engine is currently overloaded, please try again later.', type: 'server_error', param: null, code: null } }],
}

/** Starts the fake on 127.0.0.1 (a free port). */
export async function startFakeOpenAI(
  options: { apiKey?: string | string[]; slowMs?: number; models?: string[]; keepAliveTimeoutMs?: number } = {},
): Promise<FakeOpenAI> {
  let release = () => {}
  let gate = new Promise<void>((resolve) => (release = resolve))
  const fake: FakeOpenAI = {
    url: '',
    requests: [],
    aborted: 0,
    slowMs: options.slowMs ?? 200,
    latencyMs: 0,
    modes: {},
    keyModes: {},
    script: {},
    promptModes: {},
    toolCalls: {},
    ignoreTools: false,
    promptTools: {},
    retryAfter: undefined,
    arrivals: [],
    close: async () => undefined,
    audioGate: () => gate,
    releaseAudio: () => {
      release()
      gate = new Promise<void>((resolve) => (release = resolve))
    },
  }
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const bytes = Buffer.concat(chunks)
    const raw = bytes.toString('utf8')
    let body: any
    try {
      body = raw ? JSON.parse(raw) : undefined
    } catch {
      body = raw
    }
    const path = (req.url ?? '').split('?')[0]
    fake.requests.push({ method: req.method ?? '', path, headers: req.headers, body })
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_fake_${fake.requests.length}`, ...headers })
      res.end(JSON.stringify(value))
    }

    const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '')
    const accepted = options.apiKey === undefined ? undefined : ([] as string[]).concat(options.apiKey)
    if (accepted && !accepted.includes(bearer) && !fake.keyModes[bearer]) {
      return json(401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } })
    }
    if (req.method === 'GET' && path === '/v1/models') {
      return json(200, {
        object: 'list',
        data: (options.models ?? ['fake-model']).map((id) => ({ id, object: 'model', created: 1700000000, owned_by: 'fake' })),
      })
    }
    if (req.method === 'POST' && (path === '/v1/audio/speech' || path === '/v1/audio/transcriptions')) {
      return handleAudio(fake, { req, res, path, raw: bytes, body, bearer, errors: ERRORS })
    }
    if (req.method === 'POST' && path === '/v1/embeddings') return handleEmbeddings(fake, { req, res, body, bearer, errors: ERRORS })
    if (req.method === 'POST' && path === '/v1/images/generations') return handleImages(fake, { req, res, body, bearer, errors: ERRORS })
    if (req.method === 'POST' && path === '/v1/responses') return handleResponses(fake, { req, res, body, bearer, errors: ERRORS })
    if (req.method !== 'POST' || path !== '/v1/chat/completions')
      return json(404, { error: { message: `Unknown request URL: ${req.method} ${path}.`, type: 'invalid_request_error', param: null, code: 'unknown_url' } })

    const refused = chatToolsRefusal(body?.tools)
    if (refused) return json(400, refused)
    const named: string = body?.model ?? ''
    fake.arrivals.push(performance.now())
    const prompt = textOf([...(body?.messages ?? [])].reverse().find((m: any) => m.role === 'user')?.content)
    const model = behaviourOf(fake, named, bearer, prompt)
    if (answeredError(fake, ERRORS, model, json)) return
    if (model === 'fail-reset') return req.socket.destroy()
    if (model === 'fail-malformed') return json(200, { object: 'chat.completion', choices: 'nope' })
    if (model === 'fail-badjson') {
      res.writeHead(200, { 'content-type': body.stream ? 'text/event-stream' : 'application/json' })
      return res.end(body.stream ? 'data: {"id": "chatcmpl-broken", "choices": [\n\n' : '{"id": "chatcmpl-broken", "choices": [')
    }
    if (model === 'hang') {
      res.on('close', () => fake.aborted++)
      return // never answers
    }
    if (model === 'fail-midstream' && !body.stream) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' })
      res.write('{"id": "chatcmpl-cut", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hel')
      await sleep(30)
      return res.destroy()
    }

    let ended = false
    res.on('close', () => {
      if (!ended) fake.aborted++
    })
    const plan = planAnswer(body, model, fake.toolCalls, fake.ignoreTools, fake.promptTools)
    const id = `chatcmpl-fake${fake.requests.length}`
    const created = 1_732_000_000
    const fingerprint = 'fp_fake123'
    const wantLogprobs = body.logprobs === true
    if (fake.latencyMs) await sleep(fake.latencyMs)
    if (model === 'slow') await Promise.all([sleep(fake.slowMs), fake.slowGate])
    if (res.destroyed) return

    if (!body.stream) {
      ended = true
      return json(200, {
        id,
        object: 'chat.completion',
        created,
        model,
        service_tier: 'default',
        system_fingerprint: fingerprint,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: plan.content,
              refusal: plan.refusal ?? null,
              annotations: [],
              ...(plan.toolCalls ? { tool_calls: plan.toolCalls } : {}),
            },
            logprobs:
              wantLogprobs && (plan.content || plan.refusal)
                ? { content: plan.content ? logprobsFor(plan.content) : null, refusal: plan.refusal ? logprobsFor(plan.refusal) : null }
                : null,
            finish_reason: plan.finish,
          },
        ],
        usage: plan.usage,
      })
    }

    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' })
    const includeUsage = body.stream_options?.include_usage === true
    const send = (choices: any[], extra: Record<string, unknown> = {}) =>
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, service_tier: 'default', system_fingerprint: fingerprint, choices, ...(includeUsage ? { usage: null } : {}), ...extra })}\n\n`,
      )
    send([
      {
        index: 0,
        delta: { role: 'assistant', content: plan.toolCalls || plan.content === null ? null : '', refusal: plan.refusal === undefined ? null : '' },
        logprobs: null,
        finish_reason: null,
      },
    ])
    if (model === 'think') {
      await sleep(fake.slowMs) // reasoning: nothing is streamed meanwhile
      if (res.destroyed) return
      send([{ index: 0, delta: { content: 'Done.' }, logprobs: null, finish_reason: null }])
      send([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }])
      const usage = {
        ...plan.usage,
        completion_tokens: 20_015,
        total_tokens: plan.usage.prompt_tokens + 20_015,
        completion_tokens_details: { reasoning_tokens: 20_000 },
      }
      if (includeUsage) send([], { usage })
      res.write('data: [DONE]\n\n')
      ended = true
      return res.end()
    }
    if (plan.toolCalls) {
      for (const [index, call] of plan.toolCalls.entries()) {
        send([
          {
            index: 0,
            delta: { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] },
            logprobs: null,
            finish_reason: null,
          },
        ])
        for (const piece of call.function.arguments.match(/.{1,5}/gs) ?? []) {
          send([{ index: 0, delta: { tool_calls: [{ index, function: { arguments: piece } }] }, logprobs: null, finish_reason: null }])
        }
      }
    } else {
      const pieces = words(plan.content ?? '')
      for (const [i, word] of pieces.entries()) {
        if (model === 'slow') await sleep(fake.slowMs)
        if (res.destroyed) return
        if (model === 'fail-midstream' && i === 2) {
          await sleep(30) // let the first chunks reach the client, then drop the connection
          return res.destroy()
        }
        const token = i === 0 ? word : ` ${word}`
        send([{ index: 0, delta: { content: token }, logprobs: wantLogprobs ? { content: logprobsFor(word), refusal: null } : null, finish_reason: null }])
      }
      for (const [i, word] of words(plan.refusal ?? '').entries()) {
        const token = i === 0 ? word : ` ${word}`
        send([{ index: 0, delta: { refusal: token }, logprobs: wantLogprobs ? { content: null, refusal: logprobsFor(word) } : null, finish_reason: null }])
      }
    }
    send([{ index: 0, delta: {}, logprobs: null, finish_reason: plan.finish }])
    if (includeUsage) send([], { usage: plan.usage })
    res.write('data: [DONE]\n\n')
    ended = true
    res.end()
  })
  if (options.keepAliveTimeoutMs) server.keepAliveTimeout = options.keepAliveTimeoutMs
  const listening = await listenOnLoopback(server)
  fake.url = `${listening.origin}/v1`
  fake.close = listening.close
  return fake
}

export { fakeEmbedding } from './embedding-vector'
export { FAKE_EMBEDDING_DIMENSIONS } from './openai-embeddings'
