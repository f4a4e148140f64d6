import { describe, expect, it } from 'vitest'
import type { UpstreamChatRequest, UpstreamChunk } from '../../src/index'
import { anthropicChunks } from '../../src/providers/anthropic-stream'
import {
  anthropicError,
  closeObjects,
  fromAnthropicMessage,
  mergeReasoningDetails,
  parseAnthropicError,
  toAnthropicRequest,
  traitsOf,
  usageFrom,
  type ClaudeTraits,
} from '../../src/providers/anthropic-translate'

// Unit tests of the OpenAI ⇄ Anthropic Messages translation (src/providers/anthropic-translate.ts, anthropic-stream.ts).

/** The provider the errors name. */
const ANTHROPIC = { slug: 'anthropic', name: 'Anthropic' }
const BUDGET: ClaudeTraits = { thinking: 'budget', thinkingAlwaysOn: false, maxOutputTokens: 64_000 }
const ADAPTIVE: ClaudeTraits = { thinking: 'adaptive', thinkingAlwaysOn: false, maxOutputTokens: 128_000, efforts: ['low', 'medium', 'high', 'max'] }
/** The body for `request` (model claude-test), whole unless `stream`. */
const body = (request: Record<string, unknown>, traits: ClaudeTraits = BUDGET, stream = false) =>
  toAnthropicRequest({ model: 'claude-test', messages: [{ role: 'user', content: 'Hi' }], ...request } as UpstreamChatRequest, {
    provider: 'Anthropic',
    traits,
    stream,
  })
/** A 400 thrown by a translation, as [status, message, param]. */
const refusal = (run: () => unknown): unknown[] => {
  try {
    run()
  } catch (error) {
    const e = error as { status: number; message: string; param?: string }
    return [e.status, e.message, e.param]
  }
  return ['no error']
}
const hi = [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]

describe('toAnthropicRequest: messages', () => {
  it('system and developer messages → system blocks; sampling fields Anthropic refuses stay out; stop → stop_sequences', () => {
    expect(
      body({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [{ type: 'text', text: 'No lists.' }] },
          { role: 'user', content: 'Hi' },
        ],
        max_completion_tokens: 300,
        max_tokens: 100,
        temperature: 0.5,
        top_p: 0.9,
        top_k: 5,
        seed: 7,
        frequency_penalty: 1,
        stop: 'END',
        user: 'u-1',
      }),
    ).toEqual({
      model: 'claude-test',
      max_tokens: 300,
      system: [
        { type: 'text', text: 'Be brief.' },
        { type: 'text', text: 'No lists.' },
      ],
      messages: hi,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-1' },
    })
  })

  it('images: a data URL → base64, an https URL → url; other image types are a 400 naming the part', () => {
    const content = [
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
    ]
    expect(body({ messages: [{ role: 'user', content }] }).messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        ],
      },
    ])
    expect(refusal(() => body({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } }] }] }))).toEqual([
      400,
      'Anthropic cannot take this request: image type image/bmp is not supported (jpeg, png, gif, webp are)',
      'messages[0].content[0]',
    ])
  })

  it('tool calls → tool_use blocks; tool results → tool_result blocks first in one user turn', () => {
    const messages = [
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '18°C' },
      { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '21°C' }] },
      { role: 'user', content: 'Thanks' },
    ]
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }]
    expect(body({ messages, tools }).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'get_weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '18°C' },
          { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: '21°C' }] },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ])
  })

  it('tool call arguments that are not a JSON object → 400 naming them', () => {
    const messages = [
      { role: 'user', content: 'x' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1]' } }] },
    ]
    expect(refusal(() => body({ messages }))).toEqual([
      400,
      'Anthropic cannot take this request: tool call arguments must be a JSON object',
      'messages[1].tool_calls[0].function.arguments',
    ])
  })

  it('tools used in the history but not declared → declared as unavailable, tool_choice none', () => {
    const messages = [
      { role: 'user', content: 'x' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c', content: 'ok' },
    ]
    const sent = body({ messages })
    expect([sent.tools, sent.tool_choice]).toEqual([
      [{ name: 'lookup', description: 'Not available in this turn.', input_schema: { type: 'object', properties: {} } }],
      { type: 'none' },
    ])
  })
})

describe('toAnthropicRequest: tools and tool_choice', () => {
  const tools = [{ type: 'function', function: { name: 'f', description: 'F.', parameters: { properties: { a: { type: 'number' } } }, strict: true } }]
  it('a tool → name, description, an object input_schema, strict', () => {
    expect(body({ tools }).tools).toEqual([
      { name: 'f', description: 'F.', input_schema: { type: 'object', properties: { a: { type: 'number' } } }, strict: true },
    ])
  })
  it.each([
    ['none', undefined, { type: 'none' }],
    ['auto', undefined, { type: 'auto' }],
    ['required', false, { type: 'any', disable_parallel_tool_use: true }],
    [{ type: 'function', function: { name: 'f' } }, undefined, { type: 'tool', name: 'f' }],
    [undefined, false, { type: 'auto', disable_parallel_tool_use: true }],
    [undefined, undefined, undefined],
  ])('tool_choice %j, parallel_tool_calls %j → %j', (choice, parallel, expected) => {
    expect(body({ tools, tool_choice: choice, parallel_tool_calls: parallel }).tool_choice).toEqual(expected)
  })
})

describe('toAnthropicRequest: output format, max tokens, cache_control', () => {
  it('json_schema → output_config.format with every object closed', () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, tags: { type: 'array', items: { type: 'object', properties: { t: { type: 'string' } } } } },
    }
    expect(body({ response_format: { type: 'json_schema', json_schema: { name: 'c', schema } } }).output_config).toEqual({
      format: {
        type: 'json_schema',
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: {
            city: { type: 'string' },
            tags: { type: 'array', items: { type: 'object', additionalProperties: false, properties: { t: { type: 'string' } } } },
          },
        },
      },
    })
  })
  it('json_object → an instruction at the end of the system prompt, no prefill', () => {
    const sent = body({
      messages: [
        { role: 'system', content: 'S.' },
        { role: 'user', content: 'Hi' },
      ],
      response_format: { type: 'json_object' },
    })
    expect(sent.system).toEqual([
      { type: 'text', text: 'S.' },
      { type: 'text', text: 'Answer with a single valid JSON object and nothing else: no prose before or after it, no code fences.' },
    ])
    expect(sent.messages).toEqual(hi)
  })
  it('no max_tokens → the model’s maximum when streamed, at most 21,333 when whole, 4,096 when unknown', () => {
    expect([body({}, ADAPTIVE, true).max_tokens, body({}, ADAPTIVE).max_tokens, body({}, { thinking: 'budget', thinkingAlwaysOn: false }).max_tokens]).toEqual([
      128_000, 21_333, 4096,
    ])
  })
  it('cache_control on a part, a message (its last block), a tool and the request → ephemeral breakpoints, ttl left out', () => {
    const sent = body({
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Long rules.', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'A' },
            { type: 'text', text: 'B' },
          ],
          cache_control: { type: 'ephemeral' },
        },
      ],
      tools: [{ type: 'function', function: { name: 'f' }, cache_control: { type: 'ephemeral' } }],
      cache_control: { type: 'ephemeral', ttl: '1h' },
    })
    expect(sent.system).toEqual([{ type: 'text', text: 'Long rules.', cache_control: { type: 'ephemeral' } }])
    expect(sent.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'A' },
          { type: 'text', text: 'B', cache_control: { type: 'ephemeral' } },
        ],
      },
    ])
    expect(sent.tools).toEqual([{ name: 'f', input_schema: { type: 'object', properties: {} }, cache_control: { type: 'ephemeral' } }])
    expect(sent.cache_control).toEqual({ type: 'ephemeral' })
  })
})

describe('toAnthropicRequest: reasoning', () => {
  it('budget models: effort → a share of max_tokens (low 20 %)', () => {
    expect(body({ max_tokens: 10_000, reasoning: { effort: 'low' } })).toMatchObject({ max_tokens: 10_000, thinking: { type: 'enabled', budget_tokens: 2000 } })
  })
  it('budget models: a budget at or above max_tokens grows max_tokens by it; exclude → display omitted', () => {
    expect(body({ max_tokens: 4000, reasoning: { max_tokens: 8000, exclude: true } })).toMatchObject({
      max_tokens: 12_000,
      thinking: { type: 'enabled', budget_tokens: 8000, display: 'omitted' },
    })
  })
  it('budget models: the smallest budget is 1,024', () => {
    expect(body({ max_tokens: 2000, reasoning_effort: 'minimal' }).thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
  })
  it('adaptive models: effort → output_config.effort, the nearest the model takes (a tie goes to the higher), a budget alone → low / medium / high', () => {
    expect(body({ reasoning: { effort: 'xhigh' } }, ADAPTIVE)).toMatchObject({
      thinking: { type: 'adaptive', display: 'summarized' },
      output_config: { effort: 'max' },
    })
    expect(body({ reasoning_effort: 'minimal' }, ADAPTIVE).output_config).toEqual({ effort: 'low' })
    expect(body({ reasoning: { max_tokens: 10_000 } }, ADAPTIVE).output_config).toEqual({ effort: 'medium' })
  })
  it('effort none → thinking disabled; left out where thinking is always on', () => {
    expect(body({ reasoning: { enabled: false } }).thinking).toEqual({ type: 'disabled' })
    expect(body({ reasoning_effort: 'none' }, { ...ADAPTIVE, thinkingAlwaysOn: true }).thinking).toBeUndefined()
  })
  it('assistant reasoning_details of Claude go back as thinking blocks (pieces merged by index); another provider’s are dropped', () => {
    const messages = [
      { role: 'user', content: 'x' },
      {
        role: 'assistant',
        content: 'Paris.',
        reasoning_details: [
          { type: 'reasoning.text', text: 'Think', format: 'anthropic-claude-v1', index: 0 },
          { type: 'reasoning.text', text: 'ing.', format: 'anthropic-claude-v1', index: 0 },
          { type: 'reasoning.text', text: '', signature: 'sig-1', format: 'anthropic-claude-v1', index: 0 },
          { type: 'reasoning.encrypted', data: 'enc', format: 'anthropic-claude-v1', index: 1 },
          { type: 'reasoning.encrypted', data: 'gemini-sig', format: 'google-gemini-v1', index: 2 },
        ],
      },
    ]
    expect((body({ messages }).messages as unknown[])[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Thinking.', signature: 'sig-1' },
        { type: 'redacted_thinking', data: 'enc' },
        { type: 'text', text: 'Paris.' },
      ],
    })
  })
})

describe('traitsOf, closeObjects, mergeReasoningDetails', () => {
  it('traits from the catalogue entry, else from the version in the id', () => {
    expect(
      traitsOf({ id: 'a/b', pricing: { prompt: '0', completion: '0' }, maxCompletionTokens: 64_000, reasoning: { mandatory: true, efforts: ['high'] } }, 'b'),
    ).toEqual({ thinking: 'adaptive', thinkingAlwaysOn: true, maxOutputTokens: 64_000, efforts: ['high'] })
    expect([
      traitsOf(undefined, 'claude-opus-4-6').thinking,
      traitsOf(undefined, 'claude-sonnet-4-5-20250929').thinking,
      traitsOf(undefined, 'claude-3-7-sonnet-20250219').thinking,
    ]).toEqual(['adaptive', 'budget', 'budget'])
  })
  it('closeObjects leaves an explicit additionalProperties as it is', () => {
    expect(closeObjects({ type: 'object', additionalProperties: true, properties: { a: { anyOf: [{ type: 'object' }, { type: 'null' }] } } })).toEqual({
      type: 'object',
      additionalProperties: true,
      properties: { a: { anyOf: [{ type: 'object', additionalProperties: false }, { type: 'null' }] } },
    })
  })
  it('mergeReasoningDetails joins pieces of one index and keeps others apart', () => {
    expect(
      mergeReasoningDetails([
        { type: 'reasoning.text', text: 'a', format: 'f', index: 0 },
        { type: 'reasoning.text', text: 'b', signature: 's', format: 'f', index: 0 },
        { type: 'reasoning.text', text: 'c', format: 'f', index: 1 },
      ]),
    ).toEqual([
      { type: 'reasoning.text', text: 'ab', signature: 's', format: 'f', index: 0 },
      { type: 'reasoning.text', text: 'c', format: 'f', index: 1 },
    ])
  })
})

describe('answers: fromAnthropicMessage and usageFrom', () => {
  it('usage: cache reads and writes are prompt tokens, thinking tokens are reasoning tokens', () => {
    expect(
      usageFrom({
        input_tokens: 10,
        cache_read_input_tokens: 1000,
        cache_creation_input_tokens: 200,
        output_tokens: 50,
        output_tokens_details: { thinking_tokens: 30 },
      }),
    ).toEqual({
      prompt_tokens: 1210,
      completion_tokens: 50,
      total_tokens: 1260,
      prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 200 },
      completion_tokens_details: { reasoning_tokens: 30 },
    })
    expect(usageFrom({})).toEqual({
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    })
  })
  it('a refusal → finish_reason refusal and its explanation as message.refusal', () => {
    const completion = fromAnthropicMessage(
      {
        id: 'm',
        type: 'message',
        model: 'c',
        content: [],
        stop_reason: 'refusal',
        stop_details: { explanation: 'Not allowed.' },
        usage: { input_tokens: 3, output_tokens: 0 },
      },
      { excludeReasoning: false },
    )
    expect(completion.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: null, refusal: 'Not allowed.', reasoning: null },
      finish_reason: 'refusal',
    })
  })
  it('reasoning excluded → no reasoning text, the details kept (to send back); texts joined, thoughts split by a blank line', () => {
    const message = {
      id: 'm',
      type: 'message' as const,
      model: 'c',
      stop_reason: 'max_tokens',
      usage: {},
      content: [
        { type: 'thinking', thinking: 'One.', signature: 's1' },
        { type: 'thinking', thinking: 'Two.', signature: 's2' },
        { type: 'text', text: 'A' },
        { type: 'text', text: 'B' },
      ],
    }
    expect(fromAnthropicMessage(message, { excludeReasoning: false }).choices[0].message).toMatchObject({ content: 'AB', reasoning: 'One.\n\nTwo.' })
    const excluded = fromAnthropicMessage(message, { excludeReasoning: true }).choices[0]
    expect([excluded.message.reasoning, (excluded.message.reasoning_details as unknown[]).length, excluded.finish_reason]).toEqual([null, 2, 'max_tokens'])
  })
})

describe('errors: anthropicError and parseAnthropicError', () => {
  it.each([
    ['rate_limit_error', 429, 429, 'rate_limit_exceeded'],
    ['overloaded_error', 529, 502, 'provider_overloaded'],
    ['invalid_request_error', 400, 400, 'invalid_request'],
    ['not_found_error', 404, 400, 'invalid_request'],
    ['authentication_error', 401, 502, 'authentication'],
    ['permission_error', 403, 502, 'authentication'],
    ['api_error', 500, 502, 'provider_unavailable'],
    ['timeout_error', 504, 408, 'timeout'],
    ['billing_error', 400, 502, 'upstream_error'],
  ])('%s (HTTP %i) → %i %s', (type, http, status, errorType) => {
    const error = anthropicError(ANTHROPIC, http, { type, message: 'm' })
    expect([error.status, error.metadata?.error_type, error.metadata?.raw]).toEqual([status, errorType, 'm'])
  })
  it('an unknown type falls back on the HTTP status: 413 → invalid_request, 503 → provider_overloaded; none in a stream → upstream_error', () => {
    expect([
      anthropicError(ANTHROPIC, 413, { message: '' }).metadata?.raw,
      anthropicError(ANTHROPIC, 503, { message: 'x' }).metadata?.error_type,
      anthropicError(ANTHROPIC, undefined, { message: 'x' }).metadata?.error_type,
    ]).toEqual(['the request is too large', 'provider_overloaded', 'upstream_error'])
  })
  it('parseAnthropicError reads the envelope, else keeps the text', () => {
    expect(parseAnthropicError('{"type":"error","error":{"type":"api_error","message":"Boom"}}')).toEqual({ type: 'api_error', message: 'Boom' })
    expect(parseAnthropicError('<html>502</html>')).toEqual({ message: '<html>502</html>' })
  })
})

/**
 * These SSE events (`[event type, data]`), one chunk each, as a byte stream that also reads as an UpstreamResponse
 * (anthropicChunks took the response before the providers' runner refactor, and takes its body after it).
 */
function sse(events: [string, unknown][]): Parameters<typeof anthropicChunks>[0] {
  const chunks = events.map(([event, data]) => new TextEncoder().encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`))
  const body = (async function* () {
    yield* chunks
  })()
  return Object.assign(body, { status: 200, headers: { 'content-type': 'text/event-stream' }, text: async () => '', body }) as never
}
/** Every chunk of a translated stream, without `created`. */
async function translate(res: Parameters<typeof anthropicChunks>[0], excludeReasoning = false): Promise<unknown[]> {
  const out: unknown[] = []
  for await (const chunk of anthropicChunks(res, ANTHROPIC, { excludeReasoning })) out.push({ ...(chunk as UpstreamChunk), created: undefined })
  return out
}

describe('anthropicChunks: stream event translation', () => {
  const start: [string, unknown] = [
    'message_start',
    { type: 'message_start', message: { id: 'm1', model: 'c', usage: { input_tokens: 5, cache_read_input_tokens: 100, output_tokens: 1 } } },
  ]
  const stop: [string, unknown][] = [
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }],
    ['message_stop', { type: 'message_stop' }],
  ]
  const c = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: 'm1',
    model: 'c',
    created: undefined,
    choices: [{ index: 0, delta, finish_reason: finish }],
  })

  it('excluded reasoning → no thinking pieces; the block ends with one entry, empty text and its signature', async () => {
    expect(
      await translate(
        sse([
          start,
          ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }],
          ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'secret' } }],
          ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } }],
          ['content_block_stop', { type: 'content_block_stop', index: 0 }],
          ...stop,
        ]),
        true,
      ),
    ).toEqual([
      c({ role: 'assistant', content: '' }),
      c({ reasoning_details: [{ type: 'reasoning.text', text: 'secret', signature: 'sig', format: 'anthropic-claude-v1', index: 0 }] }),
      c({}, 'end_turn'),
      { id: 'm1', model: 'c', created: undefined, choices: [], usage: usageFrom({ input_tokens: 5, cache_read_input_tokens: 100, output_tokens: 9 }) },
    ])
  })

  it('a tool_use block whose input came whole (no input_json_delta) → its arguments at the block’s end', async () => {
    expect(
      await translate(
        sse([
          start,
          ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } } }],
          ['content_block_stop', { type: 'content_block_stop', index: 0 }],
          ...stop,
        ]),
      ),
    ).toEqual([
      c({ role: 'assistant', content: '' }),
      c({ tool_calls: [{ index: 0, id: 't1', type: 'function', function: { name: 'f', arguments: '' } }] }),
      c({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] }),
      c({}, 'end_turn'),
      expect.objectContaining({ choices: [] }),
    ])
  })

  it('a refusal stop → the explanation as delta.refusal on the finish chunk; unknown events are skipped', async () => {
    const chunks = await translate(
      sse([
        start,
        ['future_event', { type: 'future_event' }],
        ['message_delta', { type: 'message_delta', delta: { stop_reason: 'refusal', stop_details: { explanation: 'No.' } }, usage: {} }],
        ['message_stop', { type: 'message_stop' }],
      ]),
    )
    expect(chunks.slice(0, 2)).toEqual([c({ role: 'assistant', content: '' }), c({ refusal: 'No.' }, 'refusal')])
  })

  it('a delta for a block that never started → malformed_response', async () => {
    await expect(
      translate(sse([start, ['content_block_delta', { type: 'content_block_delta', index: 3, delta: { type: 'text_delta', text: 'x' } }]])),
    ).rejects.toMatchObject({ metadata: { error_type: 'malformed_response' } })
  })
})
