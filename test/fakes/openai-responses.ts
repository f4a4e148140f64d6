import { answeredError, behaviourOf } from './behaviour'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { type FakeOpenAI, sampleFromSchema } from './openai'

/**
 * `POST /v1/responses` of the fake OpenAI upstream, in the wire format of OpenAI's Responses API reference.
 *
 * Request: `{ model, input, instructions?, tools?, tool_choice?, text?: { format }, reasoning?: { effort?, summary? },
 * max_output_tokens?, stream?, store?, include?, metadata?, temperature?, top_p?, parallel_tool_calls? }`, where
 * `input` is a string (one user message) or items: messages (`content` a string or `input_text` / `output_text` /
 * `input_image` parts), `function_call`, `function_call_output` and `reasoning` items. Refused (400, OpenAI's error
 * body): no `model`, no `input` or one of another type, and any `previous_response_id` (this fake stores nothing, so
 * it answers as OpenAI does for an unknown one: `previous_response_not_found`), and `tools` OpenAI refuses
 * (responsesToolsRefusal: a type its reference does not list, a function or namespace without a valid name, a namespace
 * without a description or tools, or grouping anything but function and custom tools).
 *
 * The answer, a Response object with all of OpenAI's fields (`resp_fake<n>`, `n` the request's number):
 * - a tool named in `fake.toolCalls` given (a namespace's too), `tool_choice` not `none` and the last input item not a
 *   `function_call_output`: one `function_call` of it with those arguments (and the tool's `namespace`, if any);
 * - function tools given (and `fake.ignoreTools` not set), `tool_choice` not `none` and the last input item not a `function_call_output`: one
 *   `function_call` item (`fc_<n>`, `call_<n>`) for the first function tool (or the one `tool_choice` names), its
 *   arguments JSON sampled from the tool's parameters schema;
 * - the last input item a `function_call_output`: the message `The tool said: <output>`;
 * - `text.format` `json_schema`: a message holding JSON sampled from the schema (`json_object`: `{"text": <user text>}`);
 * - else the message `Hello from <model>: <last user text>`.
 * A model whose name contains `reasoning`, or a request with `reasoning.effort`, answers a `reasoning` item (`rs_<n>`)
 * first: 12 reasoning tokens, the summary `Thinking it over.` when `reasoning.summary` is set, `encrypted_content`
 * when `include` has `reasoning.encrypted_content`.
 * Usage: `input_tokens` 1 + the words of the instructions and of every text of the input (message texts, call
 * arguments, call outputs); `cached_tokens` 4 (at most the input tokens) when the model name contains `cached`;
 * `output_tokens` the words of the text (or of the call's arguments) plus the reasoning tokens. A
 * `max_output_tokens` below that cuts the text to the words left after reasoning: status `incomplete`,
 * `incomplete_details.reason` `max_output_tokens`.
 * `stream: true`: SSE events `event: <type>` / `data: <json>`, `sequence_number` from 0: `response.created`,
 * `response.in_progress`, each item's events (reasoning summary parts, `content_part`, an `output_text.delta` per
 * word, `function_call_arguments.delta` in pieces of 5 characters), then `response.completed` (or
 * `response.incomplete`) with the whole Response and its usage.
 *
 * The behaviour is picked as for chat (`script`, `keyModes`, `promptModes` on the last user text, `modes`, the model
 * name): the chat errors (`fail-400` … `fail-503`), `fail-reset`, `hang`, `fail-badjson`, `fail-malformed`, `slow`
 * (waits `slowMs` before the answer and before each delta), `fail-midstream` (streams up to two deltas, then drops
 * the connection; whole: half a body), `fail-failed` (`response.failed` with `error.code` `server_error`; whole: the
 * failed Response with status 200).
 */
export interface ResponsesContext {
  req: IncomingMessage
  res: ServerResponse
  body: any
  bearer: string
  errors: Record<string, [number, any, Record<string, string>?]>
}

const REASONING_TOKENS = 12
const SUMMARY = 'Thinking it over.'
const CREATED_AT = 1_732_000_000

const invalid = (message: string, param: string | null = null, code: string | null = null) => ({
  error: { message, type: 'invalid_request_error', param, code },
})
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const words = (text: string) => text.split(/\s+/).filter(Boolean)
/** A text cut into words, each after the whitespace before it, so that the pieces joined are the text. */
function wordPieces(text: string): string[] {
  const pieces = text.match(/\s*\S+/g) ?? []
  const tail = text.slice(pieces.join('').length)
  if (tail && pieces.length) pieces[pieces.length - 1] += tail
  return pieces
}
/** The text of a message's content or a call's output: a string, or the `text` of its parts (images have none). */
const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content
          .filter((p: any) => typeof p?.text === 'string')
          .map((p: any) => p.text)
          .join(' ')
      : ''

/** The input as items: a string is one user message. */
const itemsOf = (input: unknown): any[] => (typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : (input as any[]))
const isMessage = (item: any) => item && (item.type === 'message' || (item.type === undefined && typeof item.role === 'string'))

/** Every text an input item carries, for the usage count. */
function textsOfItem(item: any): string[] {
  if (isMessage(item)) return [textOf(item.content)]
  if (item?.type === 'function_call') return [String(item.arguments ?? '')]
  if (item?.type === 'function_call_output') return [textOf(item.output)]
  if (item?.type === 'reasoning') return (item.summary ?? []).map((s: any) => String(s?.text ?? ''))
  return []
}

type OutputItem = Record<string, any>
interface Plan {
  items: OutputItem[]
  usage: Record<string, any>
  incomplete: boolean
}

/** The tool types of OpenAI's Responses API reference (`tools`), and those a namespace may group. */
const TOOL_TYPES = [
  'function',
  'file_search',
  'computer_use_preview',
  'web_search',
  'web_search_2025_08_26',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'mcp',
  'code_interpreter',
  'image_generation',
  'local_shell',
  'shell',
  'custom',
  'namespace',
  'tool_search',
  'apply_patch',
]
const NAMESPACED_TYPES = ['function', 'custom']
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/

/** What OpenAI refuses in a Responses request's `tools` (its API reference): OpenAI's 400 body, or undefined. */
export function responsesToolsRefusal(tools: unknown): Record<string, unknown> | undefined {
  if (tools === undefined || tools === null) return undefined
  if (!Array.isArray(tools)) return invalid(`Invalid type for 'tools': expected an array, but got ${typeof tools} instead.`, 'tools', 'invalid_type')
  const named = (tool: any, param: string) => {
    if (typeof tool.name !== 'string') return invalid(`Missing required parameter: '${param}.name'.`, `${param}.name`, 'missing_required_parameter')
    if (!TOOL_NAME.test(tool.name))
      return invalid(
        `Invalid '${param}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
        `${param}.name`,
        'invalid_value',
      )
    return undefined
  }
  for (const [i, tool] of tools.entries()) {
    const param = `tools[${i}]`
    if (!TOOL_TYPES.includes(tool?.type))
      return invalid(`Invalid value: '${tool?.type}'. Supported values are: ${TOOL_TYPES.map((t) => `'${t}'`).join(', ')}.`, `${param}.type`, 'invalid_value')
    if (tool.type === 'function' || tool.type === 'custom') {
      const refused = named(tool, param)
      if (refused) return refused
    }
    if (tool.type !== 'namespace') continue
    const refused = named(tool, param)
    if (refused) return refused
    if (typeof tool.description !== 'string')
      return invalid(`Missing required parameter: '${param}.description'.`, `${param}.description`, 'missing_required_parameter')
    if (!Array.isArray(tool.tools) || !tool.tools.length)
      return invalid(`Missing required parameter: '${param}.tools'.`, `${param}.tools`, 'missing_required_parameter')
    for (const [j, inner] of tool.tools.entries()) {
      if (!NAMESPACED_TYPES.includes(inner?.type))
        return invalid(`Invalid value: '${inner?.type}'. Supported values are: 'function' and 'custom'.`, `${param}.tools[${j}].type`, 'invalid_value')
      const refused = named(inner, `${param}.tools[${j}]`)
      if (refused) return refused
    }
  }
  return undefined
}

/** What the fake answers a (valid) request: its output items, usage, and whether it was cut. */
function planResponse(body: any, n: number, toolCalls: Record<string, string>, ignoreTools: boolean): Plan {
  const named: string = body.model
  const items = itemsOf(body.input)
  const last = items[items.length - 1]
  const userText = textOf([...items].reverse().find((item) => isMessage(item) && item.role === 'user')?.content)
  const inputWords = [body.instructions ?? '', ...items.flatMap(textsOfItem)].reduce((sum, text) => sum + words(String(text)).length, 0)
  const inputTokens = 1 + inputWords
  const reasons = named.includes('reasoning') || body.reasoning?.effort != null
  const reasoningTokens = reasons ? REASONING_TOKENS : 0
  const output: OutputItem[] = []
  if (reasons) {
    output.push({
      type: 'reasoning',
      id: `rs_${n}`,
      summary: body.reasoning?.summary ? [{ type: 'summary_text', text: SUMMARY }] : [],
      ...(Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content') ? { encrypted_content: `enc_${n}` } : {}),
    })
  }
  const usage = (visible: number) => ({
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: named.includes('cached') ? Math.min(4, inputTokens) : 0 },
    output_tokens: visible + reasoningTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: inputTokens + visible + reasoningTokens,
  })

  const lastIsOutput = last?.type === 'function_call_output'
  // The function tools, a namespace's with its name (OpenAI's call of one carries `namespace`).
  const declared: any[] = ignoreTools ? [] : (body.tools ?? [])
  const functions: any[] = declared.flatMap((tool: any) =>
    tool?.type === 'function'
      ? [tool]
      : tool?.type === 'namespace'
        ? tool.tools.filter((t: any) => t.type === 'function').map((t: any) => ({ ...t, namespace: tool.name }))
        : [],
  )
  const scripted = functions.find((tool) => toolCalls[tool.name] !== undefined)
  if (scripted && body.tool_choice !== 'none' && !lastIsOutput) {
    const args = toolCalls[scripted.name]
    const namespace = scripted.namespace ? { namespace: scripted.namespace } : {}
    output.push({ type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: scripted.name, ...namespace, arguments: args, status: 'completed' })
    return { items: output, usage: usage(words(args).length), incomplete: false }
  }
  const tools: any[] = declared.filter((tool: any) => tool?.type === 'function')
  if (tools.length && body.tool_choice !== 'none' && !lastIsOutput) {
    const named = body.tool_choice?.type === 'function' ? tools.find((tool) => tool.name === body.tool_choice.name) : undefined
    const tool = named ?? tools[0]
    const args = JSON.stringify(sampleFromSchema(tool.parameters, userText))
    output.push({ type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: tool.name, arguments: args, status: 'completed' })
    return { items: output, usage: usage(words(args).length), incomplete: false }
  }

  const format = body.text?.format
  let text: string
  if (lastIsOutput) text = `The tool said: ${textOf(last.output)}`
  else if (format?.type === 'json_schema') text = JSON.stringify(sampleFromSchema(format.schema, userText))
  else if (format?.type === 'json_object') text = JSON.stringify({ text: userText })
  else text = `Hello from ${named}: ${userText}`
  let pieces = wordPieces(text)
  let incomplete = false
  const max = body.max_output_tokens
  if (typeof max === 'number' && max < pieces.length + reasoningTokens) {
    pieces = pieces.slice(0, Math.max(0, max - reasoningTokens))
    text = pieces.join('').trimStart()
    incomplete = true
  }
  output.push({
    type: 'message',
    id: `msg_${n}`,
    status: incomplete ? 'incomplete' : 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
  })
  return { items: output, usage: usage(pieces.length), incomplete }
}

/** The Response object of a request, in a given state (what `response.created` and the final event carry). */
function responseObject(body: any, n: number, state: Record<string, unknown>): Record<string, unknown> {
  const reasons = body.model.includes('reasoning') || body.reasoning?.effort != null
  const tools = (body.tools ?? []).map((tool: any) =>
    tool?.type === 'function'
      ? { type: 'function', name: tool.name, description: tool.description ?? null, parameters: tool.parameters ?? null, strict: tool.strict ?? true }
      : tool,
  )
  return {
    id: `resp_fake${n}`,
    object: 'response',
    created_at: CREATED_AT,
    status: 'in_progress',
    background: false,
    completed_at: null,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: body.max_tool_calls ?? null,
    model: body.model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    reasoning: { effort: body.reasoning?.effort ?? (reasons ? 'medium' : null), summary: body.reasoning?.summary ?? null },
    safety_identifier: body.safety_identifier ?? null,
    service_tier: 'default',
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: body.text?.format ?? { type: 'text' }, verbosity: body.text?.verbosity ?? 'medium' },
    tool_choice: body.tool_choice ?? 'auto',
    tools,
    top_logprobs: body.top_logprobs ?? 0,
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    usage: null,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
    ...state,
  }
}

const FAILED = { status: 'failed', error: { code: 'server_error', message: 'The model failed.' }, usage: null }

/** Answers one Responses API request (the record is already in `fake.requests`). */
export async function handleResponses(fake: FakeOpenAI, ctx: ResponsesContext): Promise<void> {
  const { req, res, body, bearer } = ctx
  const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_fake_${fake.requests.length}`, ...headers })
    res.end(JSON.stringify(value))
  }
  if (!body || typeof body !== 'object' || Array.isArray(body))
    return json(400, invalid("We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)"))
  if (typeof body.model !== 'string' || !body.model) return json(400, invalid("Missing required parameter: 'model'.", 'model', 'missing_required_parameter'))
  if (body.input === undefined || body.input === null) return json(400, invalid("Missing required parameter: 'input'.", 'input', 'missing_required_parameter'))
  if (typeof body.input !== 'string' && !Array.isArray(body.input))
    return json(
      400,
      invalid(`Invalid type for 'input': expected one of a string or array of input items, but got ${typeof body.input} instead.`, 'input', 'invalid_type'),
    )
  const refusedTools = responsesToolsRefusal(body.tools)
  if (refusedTools) return json(400, refusedTools)
  if (body.previous_response_id != null)
    return json(400, invalid(`Previous response with id '${body.previous_response_id}' not found.`, 'previous_response_id', 'previous_response_not_found'))

  const named: string = body.model
  const n = fake.requests.length
  const items = itemsOf(body.input)
  const prompt = textOf([...items].reverse().find((item) => isMessage(item) && item.role === 'user')?.content)
  const model = behaviourOf(fake, named, bearer, prompt)
  fake.arrivals.push(performance.now())
  if (answeredError(fake, ctx.errors, model, json)) return
  if (model === 'fail-reset') {
    req.socket.destroy()
    return
  }
  if (model === 'hang') {
    res.on('close', () => fake.aborted++)
    return // never answers
  }
  if (model === 'fail-malformed') return json(200, { id: `resp_fake${n}`, object: 'response', output: 'nope' })
  if (model === 'fail-badjson') {
    res.writeHead(200, { 'content-type': body.stream ? 'text/event-stream; charset=utf-8' : 'application/json' })
    res.end(
      body.stream
        ? 'event: response.created\ndata: {"type": "response.created", "sequence_number": 0, "response": {"id": "resp_broken", \n\n'
        : '{"id": "resp_broken", "object": "response", "output": [',
    )
    return
  }

  let ended = false
  res.on('close', () => {
    if (!ended) fake.aborted++
  })
  if (fake.latencyMs) await sleep(fake.latencyMs)
  if (model === 'slow') await sleep(fake.slowMs)
  if (res.destroyed) return

  const plan = planResponse(body, n, fake.toolCalls, fake.ignoreTools)
  const status = plan.incomplete ? 'incomplete' : 'completed'
  const final =
    model === 'fail-failed'
      ? responseObject(body, n, FAILED)
      : responseObject(body, n, {
          status,
          completed_at: plan.incomplete ? null : CREATED_AT + 1,
          incomplete_details: plan.incomplete ? { reason: 'max_output_tokens' } : null,
          output: plan.items,
          usage: plan.usage,
        })

  if (!body.stream) {
    if (model === 'fail-midstream') {
      const whole = JSON.stringify(final)
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(whole)) })
      res.write(whole.slice(0, Math.floor(whole.length / 2)))
      await sleep(30)
      res.destroy()
      return
    }
    ended = true
    return json(200, final)
  }

  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-request-id': `req_fake_${n}`,
  })
  let sequence = 0
  const send = (type: string, fields: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`)
  /** Before each delta: `slow` waits; false when the client has gone, or when `fail-midstream` drops it after two text or argument deltas. */
  let deltas = 0
  const beforeDelta = async (counted = true): Promise<boolean> => {
    if (model === 'slow') await sleep(fake.slowMs)
    if (res.destroyed) return false
    if (!counted) return true
    if (model === 'fail-midstream' && deltas === 2) {
      await sleep(30) // let the first events reach the client, then drop the connection
      res.destroy()
      return false
    }
    deltas++
    return true
  }

  send('response.created', { response: responseObject(body, n, {}) })
  send('response.in_progress', { response: responseObject(body, n, {}) })
  if (model === 'fail-failed') {
    send('response.failed', { response: final })
    ended = true
    res.end()
    return
  }
  for (const [output_index, item] of plan.items.entries()) {
    const item_id = item.id
    if (item.type === 'reasoning') {
      send('response.output_item.added', { output_index, item: { ...item, summary: [] } })
      for (const [summary_index, part] of item.summary.entries()) {
        send('response.reasoning_summary_part.added', { item_id, output_index, summary_index, part: { type: 'summary_text', text: '' } })
        if (!(await beforeDelta(false))) return
        send('response.reasoning_summary_text.delta', { item_id, output_index, summary_index, delta: part.text })
        send('response.reasoning_summary_text.done', { item_id, output_index, summary_index, text: part.text })
        send('response.reasoning_summary_part.done', { item_id, output_index, summary_index, part })
      }
    } else if (item.type === 'message') {
      const part = item.content[0]
      send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } })
      send('response.content_part.added', { item_id, output_index, content_index: 0, part: { ...part, text: '' } })
      for (const delta of wordPieces(part.text)) {
        if (!(await beforeDelta())) return
        send('response.output_text.delta', { item_id, output_index, content_index: 0, delta, logprobs: [] })
      }
      send('response.output_text.done', { item_id, output_index, content_index: 0, text: part.text, logprobs: [] })
      send('response.content_part.done', { item_id, output_index, content_index: 0, part })
    } else if (item.type === 'function_call') {
      send('response.output_item.added', { output_index, item: { ...item, arguments: '', status: 'in_progress' } })
      for (const delta of item.arguments.match(/.{1,5}/gs) ?? []) {
        if (!(await beforeDelta())) return
        send('response.function_call_arguments.delta', { item_id, output_index, delta })
      }
      send('response.function_call_arguments.done', { item_id, output_index, name: item.name, arguments: item.arguments })
    }
    send('response.output_item.done', { output_index, item })
  }
  send(plan.incomplete ? 'response.incomplete' : 'response.completed', { response: final })
  ended = true
  res.end()
}
