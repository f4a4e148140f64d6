import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Provider, UpstreamChatRequest, UpstreamChunk, UpstreamCompletion } from '../../src/index'
import { callOptions, drain, finishReasons, GatewayError, rejection, streamedArguments, streamedText, timed } from './calls'
import { asUpstream } from '../helpers/upstream-error'
import { startReplay, type Replay, type Reply } from './replay'

/**
 * The contract every wire provider keeps, run once per provider factory (in the spirit of unstorage's shared driver
 * tests). Each provider's fixtures tell the same story in its own wire format: "What is the capital of France?" →
 * "The capital of France is Paris." (14 prompt + 8 completion tokens), and "What's the weather in Paris?" → a call
 * of get_weather({"city":"Paris"}) (58 + 17 tokens). The contract asserts the exact normalized answer the setup
 * gives, and that the story's facts come out the same whatever the provider.
 */

/** The facts every provider's text fixture reports. */
export const TEXT_ANSWER = { content: 'The capital of France is Paris.', prompt_tokens: 14, completion_tokens: 8, total_tokens: 22 }
/** The facts every provider's tool fixture reports. */
export const TOOL_ANSWER = { name: 'get_weather', arguments: { city: 'Paris' }, prompt_tokens: 58, completion_tokens: 17, total_tokens: 75 }
/** The service key every provider is built with, and a customer's own key (BYOK). */
export const SERVICE_KEY = 'sk-service-test'
export const CUSTOMER_KEY = 'sk-customer-byok'

/** The text request of the story, for the model `model`. */
export const textRequest = (model: string): UpstreamChatRequest =>
  ({
    model,
    messages: [
      { role: 'system', content: 'Answer in one sentence.' },
      { role: 'user', content: 'What is the capital of France?' },
    ],
    max_tokens: 64,
    temperature: 0.2,
    stop: ['\n\n'],
    user: 'user-42',
    transforms: ['middle-out'],
  }) as UpstreamChatRequest

/** The weather tool of the story. */
export const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The current weather in a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
} as const

/** The tool request of the story. */
export const toolRequest = (model: string): UpstreamChatRequest =>
  ({
    model,
    messages: [{ role: 'user', content: "What's the weather in Paris?" }],
    tools: [WEATHER_TOOL],
    tool_choice: 'auto',
  }) as UpstreamChatRequest

/** A fixture and the exact normalized value the provider must make of it. */
export interface WireCase<T> {
  reply: Reply
  expected: T
}

/** An upstream error and what the provider must make of it. */
export interface ErrorCase {
  title: string
  reply: Reply
  /** The GatewayError's status and `metadata.error_type`. */
  status: number
  errorType: string
  /** The UpstreamError's `retryOnSameProvider`. */
  sameProvider: boolean
  /** The UpstreamError's `retryAfterMs`. */
  retryAfterMs: number | null
}

/** What a provider's contract run needs. */
export interface WireSetup {
  /** The provider under test, pointed at the replay server and built with SERVICE_KEY. */
  provider(origin: string): Provider
  /** The upstream model id the requests name. */
  model: string
  /** `METHOD /path` of a whole chat, a streamed chat and the check. */
  routes: { chat: string; stream: string; check: string }
  /** Query parameters a streamed chat must carry (Gemini's `alt=sse`). */
  streamQuery?: Record<string, string>
  /** The header a key travels in, and its value for a key. */
  auth(key: string): [header: string, value: string]
  chat: { text: WireCase<UpstreamCompletion>; tool: WireCase<UpstreamCompletion> }
  stream: { text: WireCase<UpstreamChunk[]>; tool: WireCase<UpstreamChunk[]> }
  /** The exact bodies sent for textRequest (whole and streamed) and toolRequest. */
  sent: { text: unknown; stream: unknown; tool: unknown }
  errors: ErrorCase[]
  /** `check()`: the models fixture and the result it gives; `rejected` answers the check with a 401. */
  check: { reply: Reply; rejected: Reply; target: string; message: string }
}

/** Runs the shared provider contract for one provider. */
export function runProviderContract(name: string, setup: WireSetup): void {
  describe(`provider contract: ${name}`, () => {
    let replay: Replay
    let provider: Provider
    beforeAll(async () => {
      replay = await startReplay()
      provider = setup.provider(replay.origin)
    })
    afterAll(() => replay.close())
    beforeEach(() => replay.reset())
    const [chatMethod, chatPath] = setup.routes.chat.split(' ')
    const [streamMethod, streamPath] = setup.routes.stream.split(' ')

    describe('whole answers', () => {
      it('a text answer → the exact completion, with the story’s content and usage', async () => {
        replay.on(setup.routes.chat, setup.chat.text.reply)
        const completion = await provider.chat(textRequest(setup.model), callOptions())
        expect(completion).toEqual(setup.chat.text.expected)
        expect(completion.choices[0].message.content).toBe(TEXT_ANSWER.content)
        expect(completion.usage).toMatchObject({ prompt_tokens: 14, completion_tokens: 8, total_tokens: 22 })
      })

      it('a tool call → the exact completion, get_weather({"city":"Paris"})', async () => {
        replay.on(setup.routes.chat, setup.chat.tool.reply)
        const completion = await provider.chat(toolRequest(setup.model), callOptions())
        expect(completion).toEqual(setup.chat.tool.expected)
        const calls = completion.choices[0].message.tool_calls as { type: string; function: { name: string; arguments: string } }[]
        expect(calls).toHaveLength(1)
        expect(calls[0].type).toBe('function')
        expect(calls[0].function.name).toBe(TOOL_ANSWER.name)
        expect(JSON.parse(calls[0].function.arguments)).toEqual(TOOL_ANSWER.arguments)
        expect(completion.usage).toMatchObject({ prompt_tokens: 58, completion_tokens: 17, total_tokens: 75 })
      })
    })

    describe('streamed answers', () => {
      it('a text stream → the exact chunks, one finish reason, usage in the last chunk', async () => {
        replay.on(setup.routes.stream, setup.stream.text.reply)
        const { chunks, error } = await drain(await provider.chatStream(textRequest(setup.model), callOptions()))
        expect(error).toBeUndefined()
        expect(chunks).toEqual(setup.stream.text.expected)
        expect(streamedText(chunks)).toBe(TEXT_ANSWER.content)
        expect(finishReasons(chunks)).toHaveLength(1)
        expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 14, completion_tokens: 8, total_tokens: 22 })
        expect(chunks.slice(0, -1).every((c) => !c.usage)).toBe(true)
      })

      it('a tool-call stream → the exact chunks, whose arguments join to {"city":"Paris"}', async () => {
        replay.on(setup.routes.stream, setup.stream.tool.reply)
        const { chunks, error } = await drain(await provider.chatStream(toolRequest(setup.model), callOptions()))
        expect(error).toBeUndefined()
        expect(chunks).toEqual(setup.stream.tool.expected)
        expect(JSON.parse(streamedArguments(chunks))).toEqual(TOOL_ANSWER.arguments)
        expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 58, completion_tokens: 17, total_tokens: 75 })
      })
    })

    describe('what the provider sends', () => {
      it('a whole chat: the route, the service key, the exact body', async () => {
        replay.on(setup.routes.chat, setup.chat.text.reply)
        await provider.chat(textRequest(setup.model), callOptions())
        expect(replay.requests).toHaveLength(1)
        const [sent] = replay.requests
        expect([sent.method, sent.path]).toEqual([chatMethod, chatPath])
        const [header, value] = setup.auth(SERVICE_KEY)
        expect(sent.headers[header]).toBe(value)
        expect(sent.headers['content-type']).toMatch(/^application\/json/)
        expect(sent.body).toEqual(setup.sent.text)
      })

      it('a streamed chat: the stream route and the exact body', async () => {
        replay.on(setup.routes.stream, setup.stream.text.reply)
        await drain(await provider.chatStream(textRequest(setup.model), callOptions()))
        const [sent] = replay.requests
        expect([sent.method, sent.path]).toEqual([streamMethod, streamPath])
        expect(sent.query).toEqual(setup.streamQuery ?? {})
        expect(sent.body).toEqual(setup.sent.stream)
      })

      it('a tool request: the tools and tool choice in the provider’s terms', async () => {
        replay.on(setup.routes.chat, setup.chat.tool.reply)
        await provider.chat(toolRequest(setup.model), callOptions())
        expect(replay.requests[0].body).toEqual(setup.sent.tool)
      })

      it('a customer’s own key (BYOK) replaces the service key', async () => {
        replay.on(setup.routes.chat, setup.chat.text.reply)
        await provider.chat(textRequest(setup.model), callOptions({ apiKey: CUSTOMER_KEY }))
        const [header, value] = setup.auth(CUSTOMER_KEY)
        expect(replay.requests[0].headers[header]).toBe(value)
        expect(JSON.stringify(replay.requests[0].headers)).not.toContain(SERVICE_KEY)
      })
    })

    describe('upstream errors', () => {
      for (const c of setup.errors) {
        it(`${c.title} → ${c.status} ${c.errorType}, ${c.sameProvider ? '' : 'not '}retried on the same provider, Retry-After ${c.retryAfterMs ?? 'none'}`, async () => {
          replay.on(setup.routes.chat, c.reply)
          replay.on(setup.routes.stream, c.reply)
          for (const error of [
            await rejection(provider.chat(textRequest(setup.model), callOptions())),
            await rejection(provider.chatStream(textRequest(setup.model), callOptions())),
          ]) {
            expect(error).toBeInstanceOf(GatewayError)
            expect(error.status).toBe(c.status)
            expect(error.metadata?.error_type).toBe(c.errorType)
            expect(error.metadata?.provider_name).toBe(provider.name)
            expect(asUpstream(error).retryOnSameProvider).toBe(c.sameProvider)
            expect(asUpstream(error).retryAfterMs).toBe(c.retryAfterMs)
            // What routing reads is made with the error, and says what its envelope says.
            expect([asUpstream(error).kind, asUpstream(error).provider, asUpstream(error).connection]).toEqual([
              c.errorType,
              { slug: provider.slug, name: provider.name },
              false,
            ])
          }
        })
      }

      it('a 200 whose body is not JSON → malformed_response (502)', async () => {
        replay.on(setup.routes.chat, { headers: { 'content-type': 'text/html' }, body: '<html><body><h1>502 Bad Gateway</h1></body></html>' })
        const error = await rejection(provider.chat(textRequest(setup.model), callOptions()))
        expect([error.status, error.metadata?.error_type]).toEqual([502, 'malformed_response'])
      })

      it('a 200 JSON body that is not an answer → malformed_response', async () => {
        replay.on(setup.routes.chat, { body: { object: 'list', data: [] } })
        const error = await rejection(provider.chat(textRequest(setup.model), callOptions()))
        expect([error.status, error.metadata?.error_type]).toEqual([502, 'malformed_response'])
      })

      it('a stream answered as JSON, not as an event stream → malformed_response before any chunk', async () => {
        replay.on(setup.routes.stream, { ...setup.chat.text.reply, headers: { 'content-type': 'application/json' } })
        const error = await rejection(provider.chatStream(textRequest(setup.model), callOptions()))
        expect(error.metadata?.error_type).toBe('malformed_response')
      })

      it('an event that is not JSON → malformed_response from the stream', async () => {
        replay.on(setup.routes.stream, { chunks: ['data: {"id": "broken", "choi\n\n'] })
        const { chunks, error } = await drain(await provider.chatStream(textRequest(setup.model), callOptions()))
        expect(chunks).toEqual([])
        expect(error?.metadata?.error_type).toBe('malformed_response')
      })
    })

    describe('connections that fail', () => {
      it('a stream cut mid-way → the chunks received, then a connection error retried on the same provider', async () => {
        replay.on(setup.routes.stream, { ...setup.stream.text.reply, cutAfter: 2 })
        const { chunks, error } = await drain(await provider.chatStream(textRequest(setup.model), callOptions()))
        expect(chunks.length).toBeGreaterThan(0)
        expect(chunks.length).toBeLessThan(setup.stream.text.expected.length)
        expect(chunks).toEqual(setup.stream.text.expected.slice(0, chunks.length))
        expect(error).toBeInstanceOf(GatewayError)
        expect(error?.metadata?.error_type).toBe('provider_unavailable')
        expect(asUpstream(error).retryOnSameProvider).toBe(true)
        expect([asUpstream(error).connection, asUpstream(error).retryable]).toEqual([true, true])
      })

      it('a whole answer cut mid-body → provider_unavailable, retried on the same provider', async () => {
        replay.on(setup.routes.chat, { ...setup.chat.text.reply, cutAfter: 0 })
        const error = await rejection(provider.chat(textRequest(setup.model), callOptions()))
        expect([error.status, error.metadata?.error_type]).toEqual([502, 'provider_unavailable'])
        expect(asUpstream(error).retryOnSameProvider).toBe(true)
        expect(asUpstream(error).connection).toBe(true)
      })

      it('no byte within timeoutMs → a timeout (408), promptly', async () => {
        replay.on(setup.routes.chat, { stall: true })
        let error: GatewayError | undefined
        const ms = await timed(rejection(provider.chat(textRequest(setup.model), callOptions({ timeoutMs: 100 }))).then((e) => (error = e)))
        expect([error?.status, error?.metadata?.error_type]).toEqual([408, 'timeout'])
        // Another provider may serve; this one is not asked again.
        expect([asUpstream(error).retryable, asUpstream(error).retryOnSameProvider, asUpstream(error).connection]).toEqual([true, false, false])
        expect(ms).toBeGreaterThanOrEqual(90)
        expect(ms).toBeLessThan(1000)
      })

      it('a stream that goes silent past timeoutMs → a timeout (408) after the chunks received, without waiting for the next byte', async () => {
        replay.on(setup.routes.stream, { ...setup.stream.text.reply, gapMs: 1000 })
        const stream = await provider.chatStream(textRequest(setup.model), callOptions({ timeoutMs: 150 }))
        let result: Awaited<ReturnType<typeof drain>> | undefined
        const ms = await timed(drain(stream).then((r) => (result = r)))
        expect(result!.chunks).toEqual(setup.stream.text.expected.slice(0, result!.chunks.length))
        expect(result!.chunks.length).toBeLessThan(setup.stream.text.expected.length)
        expect(result!.error).toBeInstanceOf(GatewayError)
        // The gateway's own timeout, not a connection the provider dropped: it is not retried on the same provider.
        expect([(result!.error as GatewayError).status, (result!.error as GatewayError).metadata?.error_type]).toEqual([408, 'timeout'])
        expect(ms).toBeLessThan(900)
      })

      it('an aborted signal → the call rejects promptly and the connection is closed', async () => {
        replay.on(setup.routes.chat, { stall: true })
        const controller = new AbortController()
        let error: GatewayError | undefined
        const call = rejection(provider.chat(textRequest(setup.model), callOptions({ signal: controller.signal }))).then((e) => (error = e))
        // Aborted once the provider holds the request (a busy machine may take longer than any fixed delay to send it).
        await expect.poll(() => replay.requests.length).toBe(1)
        controller.abort()
        const ms = await timed(call)
        expect(error?.name).toBe('AbortError')
        expect(ms).toBeLessThan(500)
        await expect.poll(() => replay.closedEarly).toBe(1)
      })

      it('a signal aborted before the call → rejects without reaching the provider', async () => {
        replay.on(setup.routes.chat, setup.chat.text.reply)
        const controller = new AbortController()
        controller.abort()
        const error = await rejection(provider.chat(textRequest(setup.model), callOptions({ signal: controller.signal })))
        expect(error.name).toBe('AbortError')
        expect(replay.requests).toHaveLength(0)
      })

      it('a signal aborted mid-stream → the stream ends promptly with the abort (no provider failure) and the connection is closed', async () => {
        // The next chunk comes 2 s after the one before: ending well before it is not waiting for it (timed from the
        // abort, so that a busy machine's late timer does not count).
        replay.on(setup.routes.stream, { ...setup.stream.text.reply, gapMs: 2000 })
        const controller = new AbortController()
        const stream = await provider.chatStream(textRequest(setup.model), callOptions({ signal: controller.signal }))
        let abortedAt = 0
        setTimeout(() => {
          abortedAt = performance.now()
          controller.abort()
        }, 50)
        let error: unknown
        await drain(stream).then((r) => (error = r.error))
        const ms = performance.now() - abortedAt
        expect(error).toBeInstanceOf(Error)
        expect((error as Error).name).toBe('AbortError')
        expect(abortedAt).toBeGreaterThan(0)
        expect(ms).toBeLessThan(1000)
        await expect.poll(() => replay.closedEarly).toBe(1)
      })
    })

    describe('check()', () => {
      it('lists the provider’s models with the service key', async () => {
        replay.on(setup.routes.check, setup.check.reply)
        const result = await provider.check!(callOptions())
        expect(result).toEqual([{ target: setup.check.target, ok: true, latency_ms: expect.any(Number), message: setup.check.message }])
        const [header, value] = setup.auth(SERVICE_KEY)
        expect(replay.requests[0].headers[header]).toBe(value)
        expect(`${replay.requests[0].method} ${replay.requests[0].path}`).toBe(setup.routes.check)
      })

      it('a rejected key → not ok, “the key was rejected”', async () => {
        replay.on(setup.routes.check, setup.check.rejected)
        const result = await provider.check!(callOptions({ apiKey: CUSTOMER_KEY }))
        expect(result).toEqual([{ target: setup.check.target, ok: false, latency_ms: expect.any(Number), message: 'the key was rejected' }])
        expect(replay.requests[0].headers[setup.auth(CUSTOMER_KEY)[0]]).toBe(setup.auth(CUSTOMER_KEY)[1])
      })
    })
  })
}
