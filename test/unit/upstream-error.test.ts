import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { GatewayError } from '../../src/errors'
import { anthropicError, parseAnthropicError } from '../../src/providers/anthropic-translate'
import { errorMessageOf } from '../../src/providers/checks'
import { blockedPromptError, geminiError } from '../../src/providers/gemini-translate'
import { upstreamFetch, type UpstreamRequest } from '../../src/providers/http'
import { fetchTransport } from '../../src/providers/transport'
import { fromHttpStatus, isUpstreamError, retryAfterMsOf, UpstreamError } from '../../src/providers/upstream-error'
import { wireText } from '../providers/wire'

// UpstreamError made from each provider's error shapes (docs/errors.md#upstream-errors): the fields routing reads
// (docs/routing.md#what-counts-as-a-provider-failure) are set where the error is made, beside the envelope clients see.

const OPENAI = { slug: 'openai', name: 'OpenAI' }
const ANTHROPIC = { slug: 'anthropic', name: 'Anthropic' }
const GEMINI = { slug: 'google-ai-studio', name: 'Google AI Studio' }

/** What routing reads of an error, and the status it is answered with. */
const facts = (error: UpstreamError) => ({
  status: error.status,
  kind: error.kind,
  retryable: error.retryable,
  retryOnSameProvider: error.retryOnSameProvider,
  retryAfterMs: error.retryAfterMs,
  connection: error.connection,
  provider: error.provider,
})

/** The facts expected: `kind`'s status and retry rules are given, the rest defaults to none. */
const expected = (
  provider: { slug: string; name: string },
  status: number,
  kind: string,
  retry: { retryable: boolean; sameProvider: boolean; retryAfterMs?: number | null; connection?: boolean },
) => ({
  status,
  kind,
  retryable: retry.retryable,
  retryOnSameProvider: retry.sameProvider,
  retryAfterMs: retry.retryAfterMs ?? null,
  connection: retry.connection ?? false,
  provider,
})

describe('OpenAI: an HTTP status and OpenAI’s error body (the runner’s default mapping)', () => {
  const openai = (status: number, file: string, headers: Record<string, string> = {}) =>
    fromHttpStatus(OPENAI, status, errorMessageOf(wireText('openai', file)), headers)

  it.each([
    ['400 invalid_request_error', 400, 'error-400.json', {}, expected(OPENAI, 400, 'invalid_request', { retryable: false, sameProvider: false })],
    [
      '400 context_length_exceeded',
      400,
      'error-400-context.json',
      {},
      expected(OPENAI, 400, 'context_length_exceeded', { retryable: false, sameProvider: false }),
    ],
    ['401 invalid_api_key', 401, 'error-401.json', {}, expected(OPENAI, 502, 'authentication', { retryable: false, sameProvider: false })],
    ['403', 403, 'error-403.json', {}, expected(OPENAI, 502, 'authentication', { retryable: false, sameProvider: false })],
    [
      '429 Retry-After: 2',
      429,
      'error-429.json',
      { 'retry-after': '2' },
      expected(OPENAI, 429, 'rate_limit_exceeded', { retryable: true, sameProvider: true, retryAfterMs: 2000 }),
    ],
    [
      '429 retry-after-ms: 120',
      429,
      'error-429.json',
      { 'retry-after-ms': '120' },
      expected(OPENAI, 429, 'rate_limit_exceeded', { retryable: true, sameProvider: true, retryAfterMs: 120 }),
    ],
    ['429 without a wait', 429, 'error-429.json', {}, expected(OPENAI, 429, 'rate_limit_exceeded', { retryable: true, sameProvider: true })],
    ['500 server_error', 500, 'error-500.json', {}, expected(OPENAI, 502, 'provider_unavailable', { retryable: true, sameProvider: false })],
    [
      '503 Retry-After: 1',
      503,
      'error-503.json',
      { 'retry-after': '1' },
      expected(OPENAI, 502, 'provider_overloaded', { retryable: true, sameProvider: true, retryAfterMs: 1000 }),
    ],
    ['529', 529, 'error-503.json', {}, expected(OPENAI, 502, 'provider_overloaded', { retryable: true, sameProvider: true })],
    ['504', 504, 'error-500.json', {}, expected(OPENAI, 408, 'timeout', { retryable: true, sameProvider: false })],
  ])('%s', (_title, status, file, headers, facts_) => {
    expect(facts(openai(status, file, headers))).toEqual(facts_)
  })

  it('the envelope is the one clients always saw: status, message, provider_name, error_type, raw; the wait hints passed on', () => {
    const rate = openai(429, 'error-429.json', { 'retry-after': '2', 'x-ratelimit-remaining-requests': '0' })
    expect(rate.toJSON()).toEqual({
      error: {
        code: 429,
        type: 'rate_limited',
        message: 'OpenAI is rate limiting requests',
        metadata: { provider_name: 'OpenAI', error_type: 'rate_limit_exceeded', raw: JSON.parse(wireText('openai', 'error-429.json')).error.message },
      },
    })
    expect(JSON.stringify(rate.toJSON().error.metadata)).toMatch(/^\{"provider_name":"OpenAI","error_type":"rate_limit_exceeded","raw":"Rate limit reached/)
    expect(rate.headers).toEqual({ 'retry-after': '2' })
    const bad = openai(400, 'error-400.json')
    expect(bad.message).toBe(`OpenAI rejected the request: ${bad.metadata?.raw}`)
    expect(fromHttpStatus(OPENAI, 404, '').toJSON().error).toMatchObject({
      code: 400,
      message: 'OpenAI rejected the request: model or route not found upstream',
      metadata: { error_type: 'invalid_request', raw: 'model or route not found upstream' },
    })
  })
})

describe('Anthropic: its error bodies and stream error events', () => {
  const anthropic = (status: number | undefined, file: string, headers: Record<string, string> = {}) =>
    anthropicError(ANTHROPIC, status, parseAnthropicError(wireText('anthropic', file)), headers)

  it.each([
    ['400 invalid_request_error', 400, 'error-400.json', {}, expected(ANTHROPIC, 400, 'invalid_request', { retryable: false, sameProvider: false })],
    [
      '400 prompt is too long',
      400,
      'error-400-context.json',
      {},
      expected(ANTHROPIC, 400, 'context_length_exceeded', { retryable: false, sameProvider: false }),
    ],
    ['401 authentication_error', 401, 'error-401.json', {}, expected(ANTHROPIC, 502, 'authentication', { retryable: false, sameProvider: false })],
    ['403 permission_error', 403, 'error-403.json', {}, expected(ANTHROPIC, 502, 'authentication', { retryable: false, sameProvider: false })],
    [
      '429 rate_limit_error, Retry-After: 7',
      429,
      'error-429.json',
      { 'retry-after': '7' },
      expected(ANTHROPIC, 429, 'rate_limit_exceeded', { retryable: true, sameProvider: true, retryAfterMs: 7000 }),
    ],
    ['500 api_error', 500, 'error-500.json', {}, expected(ANTHROPIC, 502, 'provider_unavailable', { retryable: true, sameProvider: false })],
    [
      '529 overloaded_error, retry-after-ms: 250',
      529,
      'error-529.json',
      { 'retry-after-ms': '250' },
      expected(ANTHROPIC, 502, 'provider_overloaded', { retryable: true, sameProvider: true, retryAfterMs: 250 }),
    ],
  ])('%s', (_title, status, file, headers, facts_) => {
    expect(facts(anthropic(status, file, headers))).toEqual(facts_)
  })

  it('an error event inside a stream (no status) is mapped by its type; an unknown one is an upstream_error another provider may serve', () => {
    const overloaded = anthropicError(ANTHROPIC, undefined, { type: 'overloaded_error', message: 'Overloaded' })
    expect(facts(overloaded)).toEqual(expected(ANTHROPIC, 502, 'provider_overloaded', { retryable: true, sameProvider: true }))
    expect(overloaded.toJSON().error.metadata).toEqual({ provider_name: 'Anthropic', error_type: 'provider_overloaded', raw: 'Overloaded' })
    const unknown = anthropicError(ANTHROPIC, undefined, { type: 'something_new', message: 'x' })
    expect(facts(unknown)).toEqual(expected(ANTHROPIC, 502, 'upstream_error', { retryable: true, sameProvider: false }))
  })
})

describe('Gemini: google.rpc.Status bodies', () => {
  const gemini = (status: number, file: string, headers: Record<string, string> = {}) => geminiError(GEMINI, status, wireText('gemini', file), headers, [])

  it.each([
    ['400 INVALID_ARGUMENT', 400, 'error-400.json', {}, expected(GEMINI, 400, 'invalid_request', { retryable: false, sameProvider: false })],
    ['400 token count exceeds', 400, 'error-400-context.json', {}, expected(GEMINI, 400, 'context_length_exceeded', { retryable: false, sameProvider: false })],
    ['400 API key not valid', 400, 'error-400-key.json', {}, expected(GEMINI, 502, 'authentication', { retryable: false, sameProvider: false })],
    ['403 PERMISSION_DENIED', 403, 'error-403.json', {}, expected(GEMINI, 502, 'authentication', { retryable: false, sameProvider: false })],
    [
      '429 RetryInfo 37s',
      429,
      'error-429.json',
      {},
      expected(GEMINI, 429, 'rate_limit_exceeded', { retryable: true, sameProvider: true, retryAfterMs: 37_000 }),
    ],
    [
      '429 with its own Retry-After: 3',
      429,
      'error-429.json',
      { 'retry-after': '3' },
      expected(GEMINI, 429, 'rate_limit_exceeded', { retryable: true, sameProvider: true, retryAfterMs: 3000 }),
    ],
    ['500 INTERNAL', 500, 'error-500.json', {}, expected(GEMINI, 502, 'provider_unavailable', { retryable: true, sameProvider: false })],
    ['503 UNAVAILABLE', 503, 'error-503.json', {}, expected(GEMINI, 502, 'provider_overloaded', { retryable: true, sameProvider: true })],
    ['504 DEADLINE_EXCEEDED', 504, 'error-504.json', {}, expected(GEMINI, 408, 'timeout', { retryable: true, sameProvider: false })],
    [
      'an error inside a stream (status 0): its code',
      0,
      'error-503.json',
      {},
      expected(GEMINI, 502, 'provider_overloaded', { retryable: true, sameProvider: true }),
    ],
  ])('%s', (_title, status, file, headers, facts_) => {
    expect(facts(gemini(status, file, headers))).toEqual(facts_)
  })

  it('RetryInfo becomes the Retry-After passed on to the client, and the wait routing reads', () => {
    const rate = gemini(429, 'error-429.json')
    expect([rate.headers, rate.retryAfterMs]).toEqual([{ 'retry-after': '37' }, 37_000])
  })

  it('a blocked prompt: 400 content_filter, answered as it is', () => {
    const blocked = blockedPromptError(GEMINI, { blockReason: 'SAFETY' })
    expect(facts(blocked)).toEqual(expected(GEMINI, 400, 'content_filter', { retryable: false, sameProvider: false }))
    expect(blocked.toJSON()).toEqual({
      error: {
        code: 400,
        type: 'invalid_request',
        message: 'Google AI Studio blocked the prompt (SAFETY)',
        metadata: { provider_name: 'Google AI Studio', error_type: 'content_filter', raw: 'promptFeedback.blockReason: SAFETY' },
      },
    })
  })
})

describe('connections that fail, and timeouts (both transports)', () => {
  const servers: Server[] = []
  afterEach(async () => {
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve))
  })
  const listen = async (handler: Parameters<typeof createServer>[1]): Promise<string> => {
    const server = createServer(handler)
    servers.push(server)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }
  const request = (timeoutMs = 2000): UpstreamRequest => ({ method: 'GET', signal: new AbortController().signal, timeoutMs, provider: OPENAI })
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('expected the call to fail')
      },
      (error: unknown) => error as UpstreamError,
    )

  // Each transport's words for a refused connection, kept in `raw` (the cause itself is kept for logs).
  for (const [name, transport, refused] of [
    ['node:http', upstreamFetch, /^ECONNREFUSED: /],
    ['fetch', fetchTransport, /fetch failed/],
  ] as const) {
    it(`${name}: a refused connection → provider_unavailable, a connection error retried on the same provider`, async () => {
      const origin = await listen(() => undefined)
      await new Promise((resolve) => servers.pop()!.close(resolve))
      const error = await failure(transport(origin, request()))
      expect(isUpstreamError(error)).toBe(true)
      expect(facts(error)).toEqual(expected(OPENAI, 502, 'provider_unavailable', { retryable: true, sameProvider: true, connection: true }))
      expect(error.metadata?.raw).toMatch(refused)
      expect(error.cause).toBeInstanceOf(Error)
    })

    it(`${name}: a body cut before its end → provider_unavailable, a connection error`, async () => {
      const origin = await listen((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' })
        res.write('{"id":')
        setTimeout(() => res.destroy(), 20)
      })
      const res = await transport(origin, request())
      const error = await failure(res.text())
      expect(facts(error)).toEqual(expected(OPENAI, 502, 'provider_unavailable', { retryable: true, sameProvider: true, connection: true }))
    })

    it(`${name}: no byte within timeoutMs → timeout (408): another provider may serve, this one is not asked again`, async () => {
      const origin = await listen(() => undefined)
      const error = await failure(transport(origin, request(80)))
      expect(facts(error)).toEqual(expected(OPENAI, 408, 'timeout', { retryable: true, sameProvider: false }))
      expect(error.toJSON().error).toEqual({
        code: 408,
        type: 'timeout',
        message: 'OpenAI did not answer in time',
        metadata: { provider_name: 'OpenAI', error_type: 'timeout', raw: 'no answer within 80 ms' },
      })
    })
  }
})

describe('UpstreamError itself', () => {
  it('reads the wait once where it is made: retry-after-ms first, then Retry-After in seconds or as a date', () => {
    const now = Date.parse('2026-11-26T12:00:00Z')
    const hints: Record<string, string>[] = [
      { 'retry-after-ms': '120', 'retry-after': '5' },
      { 'retry-after': '5' },
      { 'retry-after': '0.4' },
      { 'retry-after': 'Thu, 26 Nov 2026 12:00:05 GMT' },
      { 'retry-after': 'Thu, 26 Nov 2026 11:59:00 GMT' },
      { 'retry-after': '-1' },
      { 'retry-after': 'soon' },
      {},
    ]
    expect(hints.map((headers) => retryAfterMsOf(headers, now))).toEqual([120, 5000, 400, 5000, 0, null, null, null])
  })

  it('takes a wait given as such (a provider of its own), over any header', () => {
    const error = new UpstreamError({ kind: 'rate_limit_exceeded', provider: OPENAI, retryAfterMs: 300, headers: { 'retry-after': '9' } })
    expect([error.retryAfterMs, error.headers, error.metadata]).toEqual([
      300,
      { 'retry-after': '9' },
      { provider_name: 'OpenAI', error_type: 'rate_limit_exceeded' },
    ])
  })

  it('a secret scrubbed out keeps every field routing reads', () => {
    const error = new UpstreamError({
      kind: 'provider_unavailable',
      provider: OPENAI,
      raw: 'key sk-secret-123 failed',
      headers: { 'retry-after': '2' },
      connection: true,
    })
    const scrubbed = error.scrubbed((text) => text.split('sk-secret-123').join('[redacted]'))
    expect(facts(scrubbed)).toEqual(facts(error))
    expect([scrubbed.metadata, scrubbed.headers]).toEqual([
      { provider_name: 'OpenAI', error_type: 'provider_unavailable', raw: 'key [redacted] failed' },
      { 'retry-after': '2' },
    ])
  })

  it('is a GatewayError; one of another bundled copy is known by its fields, a plain GatewayError is not one', () => {
    const error = new UpstreamError({ kind: 'timeout', provider: OPENAI })
    expect([error instanceof GatewayError, error.name, isUpstreamError(error)]).toEqual([true, 'GatewayError', true])
    const copy = Object.assign(new GatewayError(429, 'x'), { kind: 'rate_limit_exceeded', retryable: true, retryOnSameProvider: true })
    expect(isUpstreamError(copy)).toBe(true)
    expect(isUpstreamError(new GatewayError(429, 'x', { metadata: { error_type: 'rate_limit_exceeded' } }))).toBe(false)
  })
})
