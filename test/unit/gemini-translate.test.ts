import { describe, expect, it } from 'vitest'
import type { ProviderModel, UpstreamChatRequest } from '../../src/index'
import { toGeminiJsonSchema, toGeminiParameters } from '../../src/providers/gemini-schema'
import { geminiChunks } from '../../src/providers/gemini-stream'
import {
  errorBodyOf,
  finishReasonOf,
  FOREIGN_SIGNATURE,
  fromGeminiResponse,
  geminiError,
  logprobsOf,
  readParts,
  toGeminiRequest,
  usageOf,
  usesThinkingLevel,
} from '../../src/providers/gemini-translate'

// Unit tests of the OpenAI ⇄ Gemini translation (src/providers/gemini-translate.ts, gemini-stream.ts, gemini-schema.ts).

/** The provider the errors name. */
const G = { slug: 'g', name: 'G' }
/** The Gemini body for `request` on `model` (default gemini-2.5-flash). */
const body = (request: Record<string, unknown>, model?: ProviderModel) =>
  toGeminiRequest({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }], ...request } as UpstreamChatRequest, model)
/** The [status, message, param] of what a call throws. */
const refusal = (run: () => unknown): unknown[] => {
  try {
    run()
  } catch (error) {
    const e = error as { status: number; message: string; param?: string }
    return [e.status, e.message, e.param]
  }
  return ['no error']
}
const catalogued = (reasoning: ProviderModel['reasoning']): ProviderModel => ({ id: 'google/x', pricing: { prompt: '0', completion: '0' }, reasoning })

describe('toGeminiRequest: messages', () => {
  it('system → systemInstruction, assistant → model, sampling fields → generationConfig', () => {
    expect(
      body({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello.' },
          { role: 'user', content: 'Bye' },
        ],
        temperature: 0.3,
        top_p: 0.8,
        top_k: 20,
        max_completion_tokens: 100,
        max_tokens: 50,
        stop: 'END',
        seed: 7,
        presence_penalty: 0.1,
        frequency_penalty: 0.2,
        user: 'u',
      }),
    ).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Hello.' }] },
        { role: 'user', parts: [{ text: 'Bye' }] },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: {
        candidateCount: 1,
        temperature: 0.3,
        topP: 0.8,
        topK: 20,
        maxOutputTokens: 100,
        stopSequences: ['END'],
        seed: 7,
        presencePenalty: 0.1,
        frequencyPenalty: 0.2,
      },
    })
  })

  it('images, audio and files → inlineData or fileData typed by extension', () => {
    const content = [
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
      { type: 'image_url', image_url: { url: 'https://example.com/a/cat.JPG?x=1' } },
      { type: 'input_audio', input_audio: { data: 'UklGR', format: 'wav' } },
      { type: 'file', file: { filename: 'report.pdf', file_data: 'data:application/octet-stream;base64,JVBER' } },
    ]
    expect(body({ messages: [{ role: 'user', content }] }).contents[0].parts).toEqual([
      { inlineData: { mimeType: 'image/png', data: 'iVBOR' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/a/cat.JPG?x=1' } },
      { inlineData: { mimeType: 'audio/wav', data: 'UklGR' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBER' } },
    ])
  })

  it('an image URL whose type cannot be told, or audio in another format → 400 naming the field', () => {
    expect(refusal(() => body({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat' } }] }] }))[2]).toBe(
      'messages[0].content[0].image_url.url',
    )
    expect(refusal(() => body({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'm4a' } }] }] }))).toEqual([
      400,
      'messages[0].content[0].input_audio.format: Gemini takes audio as wav, mp3, aiff, aac, ogg, flac, not "m4a"',
      'messages[0].content[0].input_audio.format',
    ])
  })

  it('tool calls → functionCall parts; results of parallel calls → functionResponse parts of one user turn', () => {
    const messages = [
      { role: 'user', content: 'Paris and Rome?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'c1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            extra_content: { google: { thought_signature: 'sig-1' } },
          },
          { id: 'c2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"temp":18}' },
      { role: 'tool', tool_call_id: 'c2', content: 'sunny' },
    ]
    expect(body({ messages }).contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [
          { functionCall: { id: 'c1', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig-1' },
          { functionCall: { id: 'c2', name: 'get_weather', args: { city: 'Rome' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'c1', name: 'get_weather', response: { temp: 18 } } },
          { functionResponse: { id: 'c2', name: 'get_weather', response: { output: 'sunny' } } },
        ],
      },
    ])
  })

  it('Gemini 3: the first call of a step without a signature gets the documented stand-in; signatures come back from reasoning_details', () => {
    const messages = [
      { role: 'user', content: 'x' },
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        reasoning_details: [{ type: 'reasoning.encrypted', format: 'google-gemini-v1', data: 'text-sig' }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
    ]
    expect(toGeminiRequest({ model: 'gemini-3-flash-preview', messages } as UpstreamChatRequest).contents[1]).toEqual({
      role: 'model',
      parts: [
        { text: 'Let me look.', thoughtSignature: 'text-sig' },
        { functionCall: { id: 'c1', name: 'f', args: {} }, thoughtSignature: FOREIGN_SIGNATURE },
      ],
    })
  })

  it('a tool result answering no earlier call, or only system messages → 400', () => {
    expect(
      refusal(() =>
        body({
          messages: [
            { role: 'user', content: 'x' },
            { role: 'tool', tool_call_id: 'nope', content: 'r' },
          ],
        }),
      )[2],
    ).toBe('messages[1].tool_call_id')
    expect(refusal(() => body({ messages: [{ role: 'system', content: 'S' }] }))).toEqual([
      400,
      'messages: Gemini needs at least one user or assistant message besides system messages',
      'messages',
    ])
  })
})

describe('toGeminiRequest: tools, tool_choice, JSON output, thinking', () => {
  const tools = [
    {
      type: 'function',
      function: {
        name: 'f',
        description: 'F.',
        parameters: { $schema: 'https://json-schema.org/draft/2020-12/schema', properties: { a: { $ref: '#/$defs/A' } }, $defs: { A: { type: 'string' } } },
      },
    },
  ]
  it('a tool → a function declaration with a self-contained parametersJsonSchema', () => {
    expect(body({ tools }).tools).toEqual([
      { functionDeclarations: [{ name: 'f', description: 'F.', parametersJsonSchema: { type: 'object', properties: { a: { type: 'string' } } } }] },
    ])
  })
  it.each([
    ['none', { mode: 'NONE' }],
    ['auto', { mode: 'AUTO' }],
    ['required', { mode: 'ANY' }],
    [
      { type: 'function', function: { name: 'f' } },
      { mode: 'ANY', allowedFunctionNames: ['f'] },
    ],
  ])('tool_choice %j → %j', (choice, config) => {
    expect(body({ tools, tool_choice: choice }).toolConfig).toEqual({ functionCallingConfig: config })
  })
  it('json_schema → responseMimeType and responseJsonSchema; json_object → responseMimeType only', () => {
    expect(
      body({ response_format: { type: 'json_schema', json_schema: { name: 'c', schema: { type: 'object', properties: { city: { type: 'string' } } } } } })
        .generationConfig,
    ).toEqual({ candidateCount: 1, responseMimeType: 'application/json', responseJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } })
    expect(body({ response_format: { type: 'json_object' } }).generationConfig).toEqual({ candidateCount: 1, responseMimeType: 'application/json' })
  })
  it('Gemini 2.5: effort → thinkingBudget (low 2,048); max_tokens as it is; none → 0, or 128 on Pro', () => {
    expect(body({ reasoning: { effort: 'low' } }).generationConfig?.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 2048 })
    expect(body({ reasoning: { max_tokens: 5000, exclude: true } }).generationConfig?.thinkingConfig).toEqual({ includeThoughts: false, thinkingBudget: 5000 })
    expect(body({ reasoning_effort: 'none' }).generationConfig?.thinkingConfig).toEqual({ includeThoughts: false, thinkingBudget: 0 })
    expect(
      toGeminiRequest({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'none' } as UpstreamChatRequest).generationConfig
        ?.thinkingConfig,
    ).toEqual({ includeThoughts: false, thinkingBudget: 128 })
    expect(
      toGeminiRequest({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'xhigh' } as UpstreamChatRequest)
        .generationConfig?.thinkingConfig,
    ).toEqual({ includeThoughts: true, thinkingBudget: 32_768 })
  })
  it('Gemini 3: effort → the nearest thinkingLevel the model offers; a catalogued thinking model shows its thoughts by default', () => {
    const model = catalogued({ efforts: ['low', 'high'] })
    expect(
      toGeminiRequest(
        { model: 'gemini-3-flash-preview', messages: [{ role: 'user', content: 'x' }], reasoning: { effort: 'medium' } } as UpstreamChatRequest,
        model,
      ).generationConfig?.thinkingConfig,
    ).toEqual({ includeThoughts: true, thinkingLevel: 'HIGH' })
    expect(
      toGeminiRequest({ model: 'gemini-3-flash-preview', messages: [{ role: 'user', content: 'x' }] } as UpstreamChatRequest, model).generationConfig
        ?.thinkingConfig,
    ).toEqual({ includeThoughts: true })
    expect([usesThinkingLevel('gemini-3-flash-preview'), usesThinkingLevel('models/gemini-10-ultra'), usesThinkingLevel('gemini-2.5-flash')]).toEqual([
      true,
      true,
      false,
    ])
  })
})

describe('gemini-schema', () => {
  it('drops $schema and $comment, inlines $refs with their siblings, removes $defs', () => {
    expect(
      toGeminiJsonSchema(
        {
          $schema: 'x',
          $comment: 'c',
          type: 'object',
          properties: { p: { $ref: '#/definitions/P', description: 'A point' } },
          definitions: { P: { type: 'array', items: { type: 'number' } } },
        },
        'w',
      ),
    ).toEqual({ type: 'object', properties: { p: { type: 'array', items: { type: 'number' }, description: 'A point' } } })
  })
  it('a recursive or external $ref → 400 naming the schema', () => {
    expect(
      refusal(() => toGeminiJsonSchema({ $defs: { N: { properties: { next: { $ref: '#/$defs/N' } } } }, $ref: '#/$defs/N' }, 'tools[0].function.parameters')),
    ).toEqual([400, 'tools[0].function.parameters: $ref "#/$defs/N" is recursive, which Gemini does not support', 'tools[0].function.parameters'])
    expect(refusal(() => toGeminiJsonSchema({ $ref: 'https://example.com/s.json' }, 'w'))[1]).toBe(
      'w: $ref "https://example.com/s.json" points outside the schema; Gemini needs a self-contained schema',
    )
  })
  it('parameters: {} → an empty object schema', () => {
    expect(toGeminiParameters({}, 'w')).toEqual({ type: 'object', properties: {} })
  })
})

describe('answers: finish reasons, usage, parts', () => {
  it.each([
    ['STOP', false, 'STOP'],
    ['STOP', true, 'tool_calls'],
    ['MAX_TOKENS', true, 'tool_calls'],
    ['MAX_TOKENS', false, 'MAX_TOKENS'],
    ['SAFETY', false, 'SAFETY'],
    ['RECITATION', false, 'content_filter'],
    ['PROHIBITED_CONTENT', false, 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', false, 'error'],
    ['CONTINUATION', false, 'length'],
    ['OTHER', false, 'stop'],
    [undefined, false, null],
  ])('finishReasonOf(%s, tool calls: %s) → %s', (native, calls, expected) => {
    expect(finishReasonOf(native, calls)).toBe(expected)
  })
  it('usage: thoughts are completion and reasoning tokens; tool-use prompt tokens are prompt tokens; cached and audio tokens in the details', () => {
    expect(
      usageOf({
        promptTokenCount: 100,
        toolUsePromptTokenCount: 20,
        cachedContentTokenCount: 64,
        candidatesTokenCount: 30,
        thoughtsTokenCount: 50,
        promptTokensDetails: [
          { modality: 'TEXT', tokenCount: 60 },
          { modality: 'AUDIO', tokenCount: 40 },
        ],
      }),
    ).toEqual({
      prompt_tokens: 120,
      completion_tokens: 80,
      total_tokens: 200,
      prompt_tokens_details: { cached_tokens: 64, audio_tokens: 40 },
      completion_tokens_details: { reasoning_tokens: 50 },
    })
  })
  it('readParts: text, thoughts, calls numbered from firstIndex, signatures, images', () => {
    expect(
      readParts(
        [
          { text: 'Hmm.', thought: true },
          { text: 'Hi ' },
          { text: 'there', thoughtSignature: 'ts' },
          { functionCall: { id: 'g1', name: 'f', args: { a: 1 } } },
          { inlineData: { mimeType: 'image/png', data: 'AAA' } },
        ],
        2,
        1,
      ),
    ).toEqual({
      content: 'Hi there',
      reasoning: 'Hmm.',
      toolCalls: [{ index: 2, id: 'g1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
      signatures: [{ type: 'reasoning.encrypted', format: 'google-gemini-v1', data: 'ts', index: 1 }],
      images: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAA' } }],
    })
  })
  it('logprobsOf → OpenAI logprobs with the top candidates', () => {
    expect(
      logprobsOf({
        chosenCandidates: [{ token: 'Hi', logProbability: -0.5 }],
        topCandidates: [
          {
            candidates: [
              { token: 'Hi', logProbability: -0.5 },
              { token: 'Yo', logProbability: -2 },
            ],
          },
        ],
      }),
    ).toEqual({
      content: [
        {
          token: 'Hi',
          logprob: -0.5,
          bytes: [72, 105],
          top_logprobs: [
            { token: 'Hi', logprob: -0.5, bytes: [72, 105] },
            { token: 'Yo', logprob: -2, bytes: [89, 111] },
          ],
        },
      ],
      refusal: null,
    })
  })
  it('an answer without a candidate → malformed_response; a blocked prompt → 400 content_filter', () => {
    expect(() => fromGeminiResponse({ usageMetadata: {} }, G, 1)).toThrow(
      expect.objectContaining({ metadata: expect.objectContaining({ error_type: 'malformed_response' }) }),
    )
    expect(refusal(() => fromGeminiResponse({ promptFeedback: { blockReason: 'SAFETY', blockReasonMessage: 'Unsafe.' } }, G, 1))).toEqual([
      400,
      'G blocked the prompt (SAFETY)',
      undefined,
    ])
  })
})

describe('errors: geminiError and errorBodyOf', () => {
  const text = (code: number, status: string, message: string, details: unknown[] = []) => JSON.stringify({ error: { code, status, message, details } })
  it.each([
    [429, 'RESOURCE_EXHAUSTED', 'Quota exceeded', 429, 'rate_limit_exceeded'],
    [503, 'UNAVAILABLE', 'The model is overloaded.', 502, 'provider_overloaded'],
    [504, 'DEADLINE_EXCEEDED', 'Deadline expired', 408, 'timeout'],
    [500, 'INTERNAL', 'An internal error has occurred.', 502, 'provider_unavailable'],
    [403, 'PERMISSION_DENIED', 'Denied', 502, 'authentication'],
    [400, 'INVALID_ARGUMENT', 'API key expired. Please renew the API key.', 502, 'authentication'],
    [400, 'INVALID_ARGUMENT', 'The input token count (2000000) exceeds the maximum number of tokens allowed (1048576).', 400, 'context_length_exceeded'],
    [404, 'NOT_FOUND', 'models/gemini-9 is not found', 400, 'invalid_request'],
  ])('HTTP %i %s → %i %s', (http, status, message, expectedStatus, errorType) => {
    const error = geminiError(G, http, text(http, status, message), {}, [])
    expect([error.status, error.metadata?.error_type, error.metadata?.raw]).toEqual([expectedStatus, errorType, `${status}: ${message}`])
  })
  it('429: RetryInfo → retry-after in whole seconds (rounded up); a Retry-After header wins', () => {
    const body = text(429, 'RESOURCE_EXHAUSTED', 'Quota', [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '12.2s' }])
    expect(geminiError(G, 429, body, {}, []).headers).toEqual({ 'retry-after': '13' })
    expect(geminiError(G, 429, body, { 'retry-after': '3' }, []).headers).toEqual({ 'retry-after': '3' })
  })
  it('an error inside a stream (no HTTP status) takes its code; secrets are blanked; a non-JSON body is kept as text', () => {
    expect(geminiError(G, 0, text(503, 'UNAVAILABLE', 'key AIza-1 overloaded'), {}, ['AIza-1', undefined]).metadata).toEqual({
      provider_name: 'G',
      error_type: 'provider_overloaded',
      raw: 'UNAVAILABLE: key [redacted] overloaded',
    })
    expect(geminiError(G, 502, '<html>Bad Gateway</html>', {}, []).metadata?.raw).toBe('<html>Bad Gateway</html>')
  })
  it('errorBodyOf reads { error } and [{ error }], else undefined', () => {
    expect([errorBodyOf('[{"error":{"code":400,"message":"m"}}]'), errorBodyOf('{"candidates":[]}'), errorBodyOf('nope')]).toEqual([
      { code: 400, message: 'm' },
      undefined,
      undefined,
    ])
  })
})

/** The chunks geminiChunks makes of these events (`data` payloads), at time 1. */
async function translate(events: unknown[]): Promise<unknown[]> {
  async function* source() {
    for (const data of events) yield { data: typeof data === 'string' ? data : JSON.stringify(data) }
  }
  const out: unknown[] = []
  for await (const chunk of geminiChunks(source(), G, [], 1)) out.push(chunk)
  return out
}

describe('geminiChunks: stream event translation', () => {
  const event = (parts: unknown[], extra: Record<string, unknown> = {}) => ({
    candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }],
    responseId: 'r1',
    modelVersion: 'gemini-2.5-flash',
  })
  const base = { id: 'r1', model: 'gemini-2.5-flash', created: 1 }

  it('calls in two events are numbered on; the finish says tool_calls; the last usageMetadata closes the stream', async () => {
    const chunks = await translate([
      event([{ functionCall: { id: 'a', name: 'f', args: {} } }]),
      {
        ...event([{ functionCall: { id: 'b', name: 'g', args: { x: 1 } } }], { finishReason: 'STOP' }),
        usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 6 },
      },
    ])
    expect(chunks).toEqual([
      {
        ...base,
        choices: [
          {
            index: 0,
            delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] },
            finish_reason: null,
          },
        ],
      },
      {
        ...base,
        choices: [
          { index: 0, delta: { tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'g', arguments: '{"x":1}' } }] }, finish_reason: null },
        ],
      },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls', native_finish_reason: 'STOP' }] },
      { ...base, choices: [], usage: usageOf({ promptTokenCount: 4, candidatesTokenCount: 6 }) },
    ])
  })

  it('a first event with nothing in it still gives the role chunk, with empty content', async () => {
    expect((await translate([event([])]))[0]).toEqual({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })
  })

  it('no event at all → malformed_response; a blocked prompt mid-stream → content_filter', async () => {
    await expect(translate([])).rejects.toMatchObject({ metadata: { error_type: 'malformed_response' } })
    await expect(translate([{ promptFeedback: { blockReason: 'OTHER' } }])).rejects.toMatchObject({ status: 400, metadata: { error_type: 'content_filter' } })
  })
})
