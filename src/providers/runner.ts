import type { GatewayError } from '../errors'
import { errorMessageOf, timedCheck } from './checks'
import type { UpstreamResponse } from './http'
import { offPathGetJson } from './off-path'
import { loadTransport, type Transport } from './transport'
import { nativeEvents } from './native-events'
import type {
  CallOptions,
  NativeApi,
  NativeCalls,
  NativeEvent,
  Provider,
  ProviderCallTypes,
  ProviderFunction,
  ProviderModel,
  UpstreamChatRequest,
  UpstreamChunk,
  UpstreamCompletion,
  UpstreamSource,
} from '../contracts'
import { CAPABILITIES, CAPABILITY_NAMES } from '../contracts'
import { fromHttpStatus, parseUpstreamJson, upstreamError } from './upstream-error'

/*
 * The one runner of upstream calls (docs/providers.md): a provider declares, per capability, the path, how a request
 * becomes a body, how the answer becomes the gateway's shape (a JSON transform, a chunk parser for event streams, or
 * a reader of the raw answer), and how its errors map; the runner owns HTTP (node:http keep-alive on the hot path,
 * ofetch off it), timeouts, aborts, the event-stream check and the classification of failed statuses.
 */

/** A request body: a JSON value (sent as `application/json`), or bytes with their content type. */
export type RequestBody = { json: unknown } | { bytes: Uint8Array; contentType: string }

/** What a response transform sees besides the answer. */
export interface AnswerContext<In> {
  request: In
  call: CallOptions
  /** The answer's headers, lower case. */
  headers: Record<string, string>
  /** The answer's text (JSON answers). */
  text: string
}

/** How one capability is called: the path, the request transform, and one way to read the answer. */
export interface Operation<In, Out> {
  /** Path after the provider's root (`/chat/completions`), or a function of the request. */
  path: string | ((request: In) => string)
  /** The `accept` header. Default `application/json`. */
  accept?: string | ((request: In) => string)
  /** Request transform: the body to send. */
  body(request: In, call: CallOptions): RequestBody
  /** Response transform of a 2xx JSON answer (parsed by the runner; non-JSON is a malformed_response). */
  // biome-ignore lint/suspicious/noExplicitAny: each declaration reads its own provider's JSON, checked where it is read
  json?(answer: any, context: AnswerContext<In>): Out
  /** Chunk parser of a 2xx event stream (the runner checks the content type first). */
  events?(body: AsyncIterable<Uint8Array>, context: Omit<AnswerContext<In>, 'text'>): Out
  /** Reader of any other 2xx answer (audio bytes, or events chosen by the answer's content type). */
  raw?(res: UpstreamResponse, context: Omit<AnswerContext<In>, 'text'>): Promise<Out> | Out
}

/** A capability whose call is more than one request (Gemini's embedding batches): `send` posts one JSON body. */
export interface Composite<In, Out> {
  run(request: In, call: CallOptions, send: (path: string, json: unknown, call: CallOptions) => Promise<string>): Promise<Out>
}

/** A `GET` off the hot path (key checks, discovery): the path, and what its JSON answer means. */
export interface Listing<Out> {
  path: string
  // biome-ignore lint/suspicious/noExplicitAny: each listing reads its own provider's JSON, checked where it is read
  read(answer: any): Out
}

/** A client API the provider is called in unchanged (docs/native.md): its path, and what its stream's error events mean. */
export interface NativeDeclaration {
  /** Path after the provider's root (`/v1/messages`, `/responses`). */
  path: string
  /** The client's headers of this API passed on to the provider, replacing its own (Anthropic's `anthropic-version`, `anthropic-beta`). */
  passHeaders?: string[]
  /** Whether a whole answer is one (Anthropic's message, OpenAI's response object); any other is a malformed_response. */
  isAnswer(answer: Record<string, unknown>): boolean
  /** The GatewayError an event of its stream stands for (its `error` event); undefined for any other event. */
  streamError(event: NativeEvent): GatewayError | undefined
}

/** The capability functions (but chat's) a declaration may say how to call: each as an operation, or a composite of several calls. */
export type CapabilityOperations = {
  [F in Exclude<ProviderFunction, 'chat'>]?:
    | Operation<ProviderCallTypes[F]['request'], ProviderCallTypes[F]['answer']>
    | Composite<ProviderCallTypes[F]['request'], ProviderCallTypes[F]['answer']>
}

/** Everything a provider is: its `/providers` facts, its models, and per capability how it is called. */
export interface ProviderDeclaration
  extends Omit<Provider, 'chat' | 'chatStream' | 'check' | 'discoverModels' | 'native' | ProviderFunction>,
    CapabilityOperations {
  /** API root the paths are appended to. */
  root: string
  /** Headers of every call (auth, version, extra headers). */
  headers(call: CallOptions): Record<string, string>
  /** Error mapping of a failed status. Default: OpenAI's error body, statuses as docs/errors.md#upstream-errors says. */
  error?(status: number, text: string, headers: Record<string, string>, call: CallOptions): GatewayError
  chat: Operation<UpstreamChatRequest, UpstreamCompletion>
  chatStream: Operation<UpstreamChatRequest, AsyncIterable<UpstreamChunk>>
  /** Client APIs it speaks natively, passed on unchanged instead of translated to chat. */
  native?: Partial<Record<NativeApi, NativeDeclaration>>
  /** The key check: `GET {root}{path}`, and the message of a success (`12 models listed`). */
  check?: Listing<string>
  /** Model discovery: `GET {root}{path}`, and the models it lists. */
  discover?: Listing<ProviderModel[]>
}

// A declaration's facts without its capability operations (what the provider copies as they are).
function withoutCapabilityOperations<T extends object>(fields: T): Omit<T, ProviderFunction> {
  const copy: Record<string, unknown> = { ...(fields as Record<string, unknown>) }
  for (const capability of CAPABILITY_NAMES) delete copy[CAPABILITIES[capability].serve]
  return copy as Omit<T, ProviderFunction>
}

/** Turns a declaration into the `Provider` the gateway calls; `transport` replaces node:http (tests, other runtimes). */
export function createProvider(declaration: ProviderDeclaration, options: { transport?: Transport } = {}): Provider {
  const { root, headers, error, chat, chatStream, check, discover, native, ...rest } = declaration
  const info = withoutCapabilityOperations(rest)
  // Who the upstream errors of its calls name.
  const source: UpstreamSource = { slug: info.slug, name: info.name }
  const fail = (status: number, text: string, resHeaders: Record<string, string>, call: CallOptions): GatewayError =>
    error ? error(status, text, resHeaders, call) : fromHttpStatus(source, status, errorMessageOf(text), resHeaders)
  let transport = options.transport

  const send = async (
    path: string,
    body: RequestBody | undefined,
    accept: string,
    call: CallOptions,
    extra?: Record<string, string>,
  ): Promise<UpstreamResponse> => {
    transport ??= await loadTransport()
    const head = Object.assign({}, call.headers, headers(call), extra)
    let payload: string | Uint8Array | undefined
    if (body && 'json' in body) {
      payload = JSON.stringify(body.json)
      head['content-type'] = 'application/json'
    } else if (body) {
      payload = body.bytes
      head['content-type'] = body.contentType
      head['content-length'] = String(body.bytes.byteLength)
    }
    head.accept = accept
    const res = await transport(`${root}${path}`, {
      method: body ? 'POST' : 'GET',
      headers: head,
      body: payload,
      signal: call.signal,
      timeoutMs: call.timeoutMs,
      provider: source,
    })
    if (res.status >= 200 && res.status < 300) return res
    throw fail(res.status, await res.text().catch(() => ''), res.headers, call)
  }

  const run =
    <In, Out>(operation: Operation<In, Out>) =>
    async (request: In, call: CallOptions): Promise<Out> => {
      const path = typeof operation.path === 'string' ? operation.path : operation.path(request)
      const accept = operation.accept === undefined ? 'application/json' : typeof operation.accept === 'string' ? operation.accept : operation.accept(request)
      const res = await send(path, operation.body(request, call), accept, call)
      if (operation.events) {
        const type = res.headers['content-type'] ?? ''
        if (!type.includes('text/event-stream')) {
          const text = await res.text().catch(() => '')
          throw upstreamError(source, 'malformed_response', `expected an event stream, got ${type || 'no content type'}: ${text.slice(0, 200)}`)
        }
        return operation.events(res.body, { request, call, headers: res.headers })
      }
      if (operation.raw) return operation.raw(res, { request, call, headers: res.headers })
      const text = await res.text()
      return operation.json!(parseUpstreamJson(source, text), { request, call, headers: res.headers, text })
    }

  const composite =
    <In, Out>(operation: Composite<In, Out>) =>
    (request: In, call: CallOptions): Promise<Out> =>
      operation.run(request, call, async (path, json, sendCall) => (await send(path, { json }, 'application/json', sendCall)).text())

  // A native API's calls: the client's body as JSON with the client's headers the API passes on; a whole answer must be
  // a JSON object the API calls an answer, a stream is read as its events.
  const nativeCalls = (declared: NativeDeclaration): NativeCalls => {
    const passed = (client: Record<string, string> = {}): Record<string, string> => {
      const out: Record<string, string> = {}
      for (const name of declared.passHeaders ?? []) if (client[name]) out[name] = client[name]
      return out
    }
    return {
      async whole(body, call, client) {
        const res = await send(declared.path, { json: Object.assign({}, body, { stream: false }) }, 'application/json', call, passed(client))
        const text = await res.text()
        const answer = parseUpstreamJson(source, text) as Record<string, unknown>
        if (!answer || typeof answer !== 'object' || Array.isArray(answer) || !declared.isAnswer(answer))
          throw upstreamError(source, 'malformed_response', text.slice(0, 200))
        return answer
      },
      async stream(body, call, client) {
        const res = await send(declared.path, { json: Object.assign({}, body, { stream: true }) }, 'text/event-stream', call, passed(client))
        const type = res.headers['content-type'] ?? ''
        if (!type.includes('text/event-stream')) {
          const text = await res.text().catch(() => '')
          throw upstreamError(source, 'malformed_response', `expected an event stream, got ${type || 'no content type'}: ${text.slice(0, 200)}`)
        }
        return nativeEvents(res.body, source, declared.streamError)
      },
    }
  }

  const listing = <Out>(listed: Listing<Out>, call: CallOptions): Promise<Out> =>
    offPathGetJson(`${root}${listed.path}`, { headers: headers(call), call, provider: source, fail }).then((answer) => listed.read(answer))

  const provider: Provider = { ...info, chat: run(chat), chatStream: run(chatStream) }
  // Every other capability the table names that the declaration says how to call (src/contracts/capabilities.ts).
  const calls = provider as unknown as Record<string, unknown>
  for (const capability of CAPABILITY_NAMES) {
    const fn = CAPABILITIES[capability].serve
    const declared = fn === 'chat' ? undefined : (declaration[fn] as Operation<unknown, unknown> | Composite<unknown, unknown> | undefined)
    if (declared) calls[fn] = 'run' in declared ? composite(declared) : run(declared)
  }
  if (native) {
    provider.native = {}
    for (const [api, declared] of Object.entries(native) as [NativeApi, NativeDeclaration][]) provider.native[api] = nativeCalls(declared)
  }
  if (check) provider.check = async (call) => [await timedCheck(`GET ${check.path}`, () => listing(check, call))]
  if (discover) provider.discoverModels = (call) => listing(discover, call)
  return provider
}
