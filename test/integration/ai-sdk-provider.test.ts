/**
 * The gateway's own AI SDK provider, `model-gateway/ai-sdk` (src/ai-sdk/, docs/first-party.md#the-ai-sdk-provider),
 * with the real `ai` 6 package (specification v3): generateText, streamText with tools over several steps, structured
 * output with a JSON schema, reasoning (on the fake Anthropic API, its thinking sent back signed in the next step),
 * embed and embedMany, a refused and a failed call as the AI SDK's APICallError, and an aborted stream. The client is
 * the gateway's in-process client of a customer's key (no HTTP; test/helpers/http-client.ts, the same shape over HTTP,
 * for the provider's own checks). Every cost the
 * provider reports is checked against the usage record the gateway billed (GET /generation), and what the org paid.
 */
import { APICallError } from '@ai-sdk/provider'
import { embed, embedMany, generateText, jsonSchema, Output, type StepResult, stepCountIs, streamText, tool } from 'ai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatewayProvider } from '../../src/ai-sdk'
import { fakeEmbedding } from '../fakes/openai'
import {
  type AiSdkFixture,
  anthropicPromptTokens,
  EMBED_PRICE,
  embedTokens,
  fakePromptTokens,
  PRICING,
  SONNET,
  startAiSdkFixture,
  sum,
  WEATHER_SCHEMA,
  words,
} from '../helpers/ai-sdk-fixture'
import { httpClient } from '../helpers/http-client'
import { tokenCost } from '../helpers/sse'

let f: AiSdkFixture
beforeAll(async () => {
  f = await startAiSdkFixture()
})
afterAll(() => f?.close())

const weather = tool({
  description: 'The current weather in a city',
  inputSchema: jsonSchema<{ city: string }>(WEATHER_SCHEMA),
  execute: async ({ city }) => `Sunny in ${city}`,
})

describe('model-gateway/ai-sdk with ai 6 (LanguageModelV3, EmbeddingModelV3)', () => {
  it('makes v3 models, callable and by name, and refuses the kinds it does not make', () => {
    const provider = gatewayProvider(httpClient(f.t.url, 'unused'))
    expect(provider('fake/gpt-test')).toMatchObject({ specificationVersion: 'v3', provider: 'model-gateway.chat', modelId: 'fake/gpt-test' })
    expect(provider.chat('a/b')).toMatchObject({ specificationVersion: 'v3', modelId: 'a/b' })
    expect(provider.embeddingModel('e/f')).toMatchObject({ specificationVersion: 'v3', provider: 'model-gateway.embedding', maxEmbeddingsPerCall: 2048 })
    expect(provider.textEmbeddingModel('e/f').modelId).toBe('e/f')
    expect(() => provider.imageModel('x/y')).toThrow(expect.objectContaining({ name: 'AI_NoSuchModelError', modelType: 'imageModel' }))
  })

  it('generateText: the answer, its usage, and a cost in providerMetadata equal to the billed record', async () => {
    const { gateway, spent, generation } = await f.customer()
    const sent = f.upstream.requests.length
    const text = 'How are you?'
    const result = await generateText({
      model: gateway('fake/gpt-test'),
      system: 'Be brief.',
      prompt: text,
      maxOutputTokens: 50,
      temperature: 0.3,
      topP: 0.9,
      seed: 7,
      stopSequences: ['###'],
      maxRetries: 0,
    })

    const [sentUp] = f.chatsSince(sent)
    expect(sentUp.body).toMatchObject({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: text },
      ],
      max_tokens: 50,
      temperature: 0.3,
      top_p: 0.9,
      seed: 7,
      stop: ['###'],
    })
    expect(sentUp.body.stream).toBeUndefined()
    const answer = `Hello from gpt-test: ${text}`
    expect(result.text).toBe(answer)
    expect(result.finishReason).toBe('stop')
    expect(result.rawFinishReason).toBe('stop')
    const promptTokens = fakePromptTokens(sentUp.body)
    expect(result.usage).toMatchObject({
      inputTokens: promptTokens,
      inputTokenDetails: { noCacheTokens: promptTokens, cacheReadTokens: 0, cacheWriteTokens: 0 },
      outputTokens: words(answer),
      outputTokenDetails: { textTokens: words(answer), reasoningTokens: 0 },
      totalTokens: promptTokens + words(answer),
    })
    const cost = tokenCost(PRICING, promptTokens, words(answer))
    const id = result.response.id
    expect(id).toMatch(/^gen-\d+-[A-Za-z0-9]{20}$/)
    expect(result.response.modelId).toBe('fake/gpt-test')
    expect(result.response.timestamp).toBeInstanceOf(Date)
    const billed = await generation(id)
    expect(billed).toMatchObject({ id, model: 'fake/gpt-test', tokens_prompt: promptTokens, tokens_completion: words(answer), streamed: false })
    expect(result.providerMetadata?.modelGateway).toEqual({
      generationId: id,
      provider: 'Fake',
      cost: billed.total_cost,
      costCurrency: 'USD',
      costEur: billed.cost_eur,
      isByok: false,
    })
    expect(billed.total_cost).toBe(Number(cost.usd))
    expect(billed.cost_eur).toBe(Number(cost.eur))
    expect(await spent()).toBe(cost.eur)
  })

  it('streamText with a tool: the call streamed and executed, its result sent back, both steps billed as reported', async () => {
    const { gateway, spent, generation } = await f.customer()
    const sent = f.upstream.requests.length
    const result = streamText({ model: gateway('fake/gpt-test'), prompt: 'Lisbon', maxRetries: 0, stopWhen: stepCountIs(3), tools: { get_weather: weather } })
    const seen: string[] = []
    let toolInput = ''
    let text = ''
    for await (const part of result.fullStream) {
      seen.push(part.type)
      if (part.type === 'tool-input-delta') toolInput += part.delta
      if (part.type === 'text-delta') text += part.text
      if (part.type === 'error') throw part.error
    }

    expect(toolInput).toBe('{"city":"Lisbon"}')
    expect(seen.filter((type) => type.startsWith('tool-') || type.endsWith('-step'))).toEqual([
      'start-step',
      'tool-input-start',
      ...Array(Math.ceil('{"city":"Lisbon"}'.length / 5)).fill('tool-input-delta'),
      'tool-input-end',
      'tool-call',
      'tool-result',
      'finish-step',
      'start-step',
      'finish-step',
    ])
    expect(text).toBe('The tool said: Sunny in Lisbon')
    const steps = await result.steps
    expect(steps).toHaveLength(2)
    expect(steps[0].finishReason).toBe('tool-calls')
    expect(steps[0].toolCalls).toEqual([expect.objectContaining({ toolName: 'get_weather', input: { city: 'Lisbon' } })])
    expect(steps[0].toolResults).toEqual([expect.objectContaining({ toolName: 'get_weather', output: 'Sunny in Lisbon' })])
    const [first, second] = f.chatsSince(sent)
    expect(first.body).toMatchObject({ stream: true, stream_options: { include_usage: true }, tool_choice: 'auto' })
    expect(first.body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'The current weather in a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
        },
      },
    ])
    const callId = steps[0].toolCalls[0].toolCallId
    expect(callId).toMatch(/^call_fake0/)
    expect(second.body.messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: callId, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lisbon"}' } }] },
      { role: 'tool', tool_call_id: callId, content: 'Sunny in Lisbon' },
    ])
    // Each step is a generation of its own, its reported cost the one billed; the org paid both.
    const paid: string[] = []
    for (const [i, step] of steps.entries()) {
      const billed = await generation(step.response.id)
      const body = [first, second][i].body
      const completion = i === 0 ? Math.ceil('{"city":"Lisbon"}'.length / 4) : words(text)
      const cost = tokenCost(PRICING, fakePromptTokens(body), completion)
      expect(billed).toMatchObject({ streamed: true, tokens_prompt: fakePromptTokens(body), tokens_completion: completion, total_cost: Number(cost.usd) })
      expect(step.providerMetadata?.modelGateway).toMatchObject({ generationId: step.response.id, cost: billed.total_cost, costEur: billed.cost_eur })
      expect(step.usage).toMatchObject({ inputTokens: billed.tokens_prompt, outputTokens: completion })
      paid.push(cost.eur)
    }
    expect(await spent()).toBe(sum(paid))
  })

  it('structured output: Output.object sends a strict json_schema, whole and streamed, and parses the answer', async () => {
    const { gateway } = await f.customer()
    const schema = {
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'integer' } },
      required: ['name', 'age'],
      additionalProperties: false,
    } as const
    const output = Output.object({ schema: jsonSchema<{ name: string; age: number }>(schema) })

    const sent = f.upstream.requests.length
    const whole = await generateText({ model: gateway('fake/gpt-test'), prompt: 'Ada', maxRetries: 0, output })
    expect(whole.output).toEqual({ name: 'Ada', age: 42 })
    const streamed = streamText({ model: gateway('fake/gpt-test'), prompt: 'Grace', maxRetries: 0, output })
    const partials: unknown[] = []
    for await (const partial of streamed.partialOutputStream) partials.push(partial)
    expect(await streamed.output).toEqual({ name: 'Grace', age: 42 })
    expect(partials.at(-1)).toEqual({ name: 'Grace', age: 42 })

    const [first, second] = f.chatsSince(sent)
    for (const body of [first.body, second.body])
      expect(body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema, strict: true } })
    expect(second.body.stream).toBe(true)
  })

  it('JSON without a schema is json_object; strictJsonSchema: false and the options under modelGateway / openrouter pass through', async () => {
    const { gateway } = await f.customer()
    const sent = f.upstream.requests.length
    const loose = await generateText({ model: gateway('fake/gpt-test'), prompt: 'Loose', maxRetries: 0, output: Output.json() })
    expect(loose.output).toEqual({ text: 'Loose' })
    await generateText({
      model: gateway('fake/gpt-test'),
      prompt: 'Named',
      maxRetries: 0,
      output: Output.object({ schema: jsonSchema({ type: 'object', properties: { a: { type: 'string' } } }), name: 'thing', description: 'A thing' }),
      providerOptions: { modelGateway: { strictJsonSchema: false, user: 'end-user-7' }, openrouter: { user: 'ignored', parallelToolCalls: false } },
    })
    const [first, second] = f.chatsSince(sent)
    expect(first.body.response_format).toEqual({ type: 'json_object' })
    expect(second.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'thing', description: 'A thing', schema: { type: 'object', properties: { a: { type: 'string' } } }, strict: false },
    })
    expect(second.body.user).toBe('end-user-7')
  })

  it('reasoning: generateText on Claude returns the thinking and bills it; the next step sends it back signed', async () => {
    const { gateway, spent, generation } = await f.customer()
    const sent = f.claude.requests.length
    const question = 'Weather in Porto?'
    const result = await generateText({
      model: gateway('anthropic/claude-sonnet-5.5'),
      prompt: question,
      maxRetries: 0,
      stopWhen: stepCountIs(3),
      tools: { get_weather: weather },
      providerOptions: { modelGateway: { reasoning: { effort: 'high' } } },
    })

    const [first, second] = f.messagesSince(sent)
    expect(first.body).toMatchObject({ model: 'claude-sonnet-5-5', thinking: { type: 'adaptive' }, output_config: { effort: 'high' } })
    const thinking = `The user asked about ${question}; I should answer plainly.`
    expect(result.steps[0].reasoningText).toBe(thinking)
    const reasoningPart = result.steps[0].content.find((part) => part.type === 'reasoning')
    expect(reasoningPart?.providerMetadata?.modelGateway?.reasoningDetails).toEqual([
      expect.objectContaining({ type: 'reasoning.text', text: thinking, signature: expect.any(String) }),
    ])
    // The fake checks a thinking block's signature against its text: the second step was accepted with it.
    expect(second.body.messages[1].content[0]).toEqual({ type: 'thinking', thinking, signature: expect.any(String) })
    expect(result.text).toBe(`The tools said: Sunny in ${question}`)
    const billed = await generation(result.steps[0].response.id)
    expect(billed.native_tokens_reasoning).toBe(words(thinking))
    expect(result.steps[0].usage.outputTokenDetails.reasoningTokens).toBe(words(thinking))
    expect(result.steps[0].providerMetadata?.modelGateway?.cost).toBe(billed.total_cost)
    const firstCost = tokenCost(SONNET.pricing, anthropicPromptTokens(first.body), billed.tokens_completion)
    expect(billed.total_cost).toBe(Number(firstCost.usd))
    const last = await generation(result.steps[1].response.id)
    const secondCost = tokenCost(SONNET.pricing, anthropicPromptTokens(second.body), last.tokens_completion)
    expect(last.total_cost).toBe(Number(secondCost.usd))
    expect(result.steps[1].providerMetadata?.modelGateway?.cost).toBe(last.total_cost)
    expect(await spent()).toBe(sum([firstCost.eur, secondCost.eur]))
  })

  it('reasoning: streamText on Claude streams the thinking once, then the answer (options under openrouter)', async () => {
    const { gateway } = await f.customer()
    const question = 'Why is grass green?'
    const result = streamText({
      model: gateway('anthropic/claude-sonnet-5.5'),
      prompt: question,
      maxRetries: 0,
      providerOptions: { openrouter: { reasoning: { effort: 'low' } } },
    })
    const order: string[] = []
    let reasoning = ''
    let text = ''
    for await (const part of result.fullStream) {
      if (part.type.startsWith('reasoning-') || part.type.startsWith('text-')) order.push(part.type.replace(/-delta$/, ''))
      if (part.type === 'reasoning-delta') reasoning += part.text
      if (part.type === 'text-delta') text += part.text
    }
    const thinking = `The user asked about ${question}; I should answer plainly.`
    expect(reasoning).toBe(thinking)
    expect(await result.reasoningText).toBe(thinking)
    expect(text).toBe(`Hello from claude-sonnet-5-5: ${question}`)
    expect([...new Set(order)]).toEqual(['reasoning-start', 'reasoning', 'reasoning-end', 'text-start', 'text', 'text-end'])
    expect((await result.usage).outputTokenDetails.reasoningTokens).toBe(words(thinking))
  })

  it('the prompt as chat messages: images (bytes and URL), a PDF, audio, an earlier turn with reasoning, tool results of every kind', async () => {
    const { gateway } = await f.customer()
    const sent = f.upstream.requests.length
    const png = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10])
    const wav = new Uint8Array([82, 73, 70, 70, 0, 0, 0, 0])
    const result = await generateText({
      model: gateway('fake/gpt-test'),
      maxRetries: 0,
      messages: [
        { role: 'system', content: 'Look closely.' },
        { role: 'user', content: 'Before' },
        {
          role: 'assistant',
          content: [
            {
              type: 'reasoning',
              text: 'I thought.',
              providerOptions: { modelGateway: { reasoningDetails: [{ type: 'reasoning.text', text: 'I thought.' }] } },
            },
            { type: 'text', text: 'Earlier answer' },
            { type: 'tool-call', toolCallId: 'call_1', toolName: 'lookup', input: { q: 'x' } },
            { type: 'tool-call', toolCallId: 'call_2', toolName: 'lookup', input: { q: 'y' } },
            { type: 'tool-call', toolCallId: 'call_3', toolName: 'lookup', input: { q: 'z' } },
          ],
        },
        {
          role: 'tool',
          content: [
            { type: 'tool-result', toolCallId: 'call_1', toolName: 'lookup', output: { type: 'json', value: { found: true } } },
            { type: 'tool-result', toolCallId: 'call_2', toolName: 'lookup', output: { type: 'error-text', value: 'not found' } },
            {
              type: 'tool-result',
              toolCallId: 'call_3',
              toolName: 'lookup',
              output: {
                type: 'content',
                value: [
                  { type: 'text', text: 'part one' },
                  { type: 'text', text: 'part two' },
                ],
              },
            },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these?', providerOptions: { modelGateway: { cacheControl: { type: 'ephemeral' } } } },
            { type: 'image', image: png, mediaType: 'image/png' },
            { type: 'image', image: new URL('https://example.com/cat.jpg') },
            { type: 'file', data: new Uint8Array([37, 80, 68, 70]), mediaType: 'application/pdf', filename: 'doc.pdf' },
            { type: 'file', data: wav, mediaType: 'audio/wav' },
          ],
        },
      ],
    })
    // The fake answers the text of the last user message's parts joined by spaces: five parts reached it.
    expect(result.text).toBe(`Hello from gpt-test: What is in these?${' '.repeat(4)}`)
    const [upstreamChat] = f.chatsSince(sent)
    expect((result.request.body as any).messages).toEqual([
      { role: 'system', content: 'Look closely.' },
      { role: 'user', content: 'Before' },
      {
        role: 'assistant',
        content: 'Earlier answer',
        reasoning: 'I thought.',
        reasoning_details: [{ type: 'reasoning.text', text: 'I thought.' }],
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } },
          { id: 'call_2', type: 'function', function: { name: 'lookup', arguments: '{"q":"y"}' } },
          { id: 'call_3', type: 'function', function: { name: 'lookup', arguments: '{"q":"z"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"found":true}' },
      { role: 'tool', tool_call_id: 'call_2', content: 'not found' },
      { role: 'tool', tool_call_id: 'call_3', content: 'part one\npart two' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?', cache_control: { type: 'ephemeral' } },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${Buffer.from(png).toString('base64')}` } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          { type: 'file', file: { file_data: `data:application/pdf;base64,${Buffer.from([37, 80, 68, 70]).toString('base64')}`, filename: 'doc.pdf' } },
          { type: 'input_audio', input_audio: { data: Buffer.from(wav).toString('base64'), format: 'wav' } },
        ],
      },
    ])
    // What reached the upstream is the gateway's business (docs/chat.md); the images at least arrive as sent.
    expect(JSON.stringify(upstreamChat.body.messages)).toContain('https://example.com/cat.jpg')
  })

  for (const [mode, exclude] of [
    ['generateText', false],
    ['streamText', false],
    ['generateText', true],
    ['streamText', true],
  ] as const) {
    it(`Gemini 3 with a tool (${mode}${exclude ? ', reasoning excluded' : ''}): the thought signature goes back with the call`, async () => {
      const { gateway } = await f.customer()
      const sent = f.google.requests.length
      const options = {
        model: gateway('google/gemini-3.5-flash'),
        prompt: 'Madrid',
        maxRetries: 0,
        stopWhen: stepCountIs(3),
        tools: { get_weather: weather },
        providerOptions: { modelGateway: { reasoning: { exclude } } },
      }
      let result: {
        steps: PromiseLike<StepResult<{ get_weather: typeof weather }>[]> | StepResult<{ get_weather: typeof weather }>[]
        text: PromiseLike<string> | string
      }
      if (mode === 'generateText') result = await generateText(options)
      else {
        result = streamText(options)
        for await (const part of (result as ReturnType<typeof streamText<{ get_weather: typeof weather }>>).fullStream)
          if (part.type === 'error') throw part.error
      }
      const steps = await result.steps
      expect(steps.map((step) => step.finishReason)).toEqual(['tool-calls', 'stop'])
      expect(steps[0].toolCalls).toEqual([expect.objectContaining({ toolName: 'get_weather', input: { city: 'Madrid' } })])
      const details = steps[0].content.flatMap((part) =>
        part.type === 'reasoning' ? ((part.providerMetadata?.modelGateway?.reasoningDetails as any[]) ?? []) : [],
      )
      expect(details).toEqual([expect.objectContaining({ type: 'reasoning.encrypted', data: expect.any(String) })])
      // The fake refuses a second step whose function call lacks a signature it handed out: it answered.
      const second = f.google.requests.slice(sent).filter((r) => r.path.includes(':'))[1]
      const call = second.body.contents[1].parts.find((part: any) => part.functionCall)
      expect(f.google.signatures.has(call.thoughtSignature)).toBe(true)
      expect(await result.text).toBe('The tools said: get_weather={"output":"Sunny in Madrid"}')
    })
  }

  it('embed and embedMany: the upstream’s vectors, the tokens, and the billed cost', async () => {
    const { gateway, spent, generation } = await f.customer()
    const model = gateway.embeddingModel('openai/text-embedding-3-small')
    const one = await embed({ model, value: 'The quick brown fox', maxRetries: 0 })
    expect(one.embedding).toEqual(fakeEmbedding('The quick brown fox', 1536))
    expect(one.usage).toEqual({ tokens: embedTokens(['The quick brown fox']) })
    const meta = one.providerMetadata?.modelGateway as any
    const billedOne = await generation(meta.generationId)
    expect(meta).toMatchObject({ cost: billedOne.total_cost, costEur: billedOne.cost_eur, costCurrency: 'USD' })
    expect(billedOne.total_cost).toBe(Number(tokenCost({ prompt: EMBED_PRICE, completion: '0' }, embedTokens(['The quick brown fox']), 0).usd))

    const values = ['jumps over', 'the lazy dog', 'and runs']
    const many = await embedMany({ model, values, maxRetries: 0, providerOptions: { modelGateway: { dimensions: 256 } } })
    expect(many.embeddings).toEqual(values.map((value) => fakeEmbedding(value, 256)))
    expect(many.usage).toEqual({ tokens: embedTokens(values) })
    const embedCalls = f.upstream.requests.filter((r) => r.path === '/v1/embeddings')
    expect(embedCalls.at(-1)!.body).toMatchObject({ model: 'text-embedding-3-small', input: values, dimensions: 256 })
    const manyMeta = many.providerMetadata?.modelGateway as any
    const billedMany = await generation(manyMeta.generationId)
    expect(manyMeta.cost).toBe(billedMany.total_cost)
    const eur = [embedTokens(['The quick brown fox']), embedTokens(values)].map((n) => tokenCost({ prompt: EMBED_PRICE, completion: '0' }, n, 0).eur)
    expect(billedMany.cost_eur).toBe(Number(eur[1]))
    expect(await spent()).toBe(sum(eur))
  })

  it('a call the gateway refuses is an APICallError with its status, not retried (402), and nothing is billed', async () => {
    const { gateway, spent } = await f.customer(null)
    const sent = f.upstream.requests.length
    const error = await generateText({ model: gateway('fake/gpt-test'), prompt: 'Hi', maxRetries: 2 }).catch((e) => e)
    expect(APICallError.isInstance(error)).toBe(true)
    expect(error).toMatchObject({ statusCode: 402, isRetryable: false, url: '/chat/completions', data: { code: 402, type: 'insufficient_credits' } })
    expect(JSON.parse(error.responseBody).error).toMatchObject({ code: 402, type: 'insufficient_credits' })
    expect(error.requestBodyValues).toMatchObject({ model: 'fake/gpt-test', messages: [{ role: 'user', content: 'Hi' }] })
    expect(f.chatsSince(sent)).toHaveLength(0)
    expect(await spent()).toBe('0')

    const embedError = await embed({ model: gateway.embeddingModel('openai/text-embedding-3-small'), value: 'x', maxRetries: 0 }).catch((e) => e)
    expect(APICallError.isInstance(embedError)).toBe(true)
    expect(embedError).toMatchObject({ statusCode: 402, url: '/embeddings' })
  })

  it('an upstream failure is an APICallError with the gateway’s status, retryable (the AI SDK retries it), whole and streamed', async () => {
    const { gateway, spent } = await f.customer()
    const sent = f.upstream.requests.length
    const error = await generateText({ model: gateway('fake/fail-500'), prompt: 'Hi', maxRetries: 1 }).catch((e) => e)
    // The AI SDK wraps the last of its tries in a RetryError.
    expect(error.name).toBe('AI_RetryError')
    expect(error.errors).toHaveLength(2)
    expect(APICallError.isInstance(error.lastError)).toBe(true)
    expect(error.lastError).toMatchObject({ statusCode: 502, isRetryable: true })
    expect(f.chatsSince(sent).length).toBeGreaterThanOrEqual(2)

    let streamError: any
    const result = streamText({
      model: gateway('fake/fail-500'),
      prompt: 'Hi',
      maxRetries: 0,
      onError: ({ error }) => {
        streamError = error
      },
    })
    for await (const _ of result.fullStream);
    expect(APICallError.isInstance(streamError)).toBe(true)
    expect(streamError).toMatchObject({ statusCode: 502 })
    expect(await spent()).toBe('0')
  })

  it('aborting streamText stops the upstream and bills what was generated', async () => {
    const { gateway, user, spent } = await f.customer()
    const aborted = f.upstream.aborted
    const controller = new AbortController()
    const result = streamText({ model: gateway('fake/slow'), prompt: 'one two three four five six seven eight', maxRetries: 0, abortSignal: controller.signal })
    const seen: string[] = []
    let text = ''
    for await (const part of result.fullStream) {
      seen.push(part.type)
      if (part.type === 'text-delta') {
        text += part.text
        if (words(text) === 2) controller.abort()
      }
    }
    expect(seen.at(-1)).toBe('abort')
    expect(text).toBe('Hello from')
    await expect.poll(() => f.upstream.aborted, { timeout: 3000 }).toBe(aborted + 1)
    const cancelled = async () => (await f.t.gateway.admin.usage(user.org_id)).find((r) => r.status === 'cancelled')
    await expect.poll(async () => (await cancelled())?.status, { timeout: 3000 }).toBe('cancelled')
    const record = (await cancelled())!
    // The words streamed before the abort (two, perhaps a third in flight) are billed, estimated: no usage came.
    expect(record).toMatchObject({ model: 'fake/slow', stream: true, usage_estimated: true })
    expect(record.completion_tokens).toBeGreaterThanOrEqual(2)
    expect(record.completion_tokens).toBeLessThan(words('Hello from slow: one two three four five six seven eight'))
    expect(await spent()).toBe(record.cost_eur)
    expect(record.cost).toBe(tokenCost(PRICING, record.prompt_tokens, record.completion_tokens).usd)
  })

  it('an upstream that fails mid-stream: the text so far, then an error part with an APICallError, finished as an error', async () => {
    const { gateway } = await f.customer()
    const dropped = f.upstream.aborted
    const errors: unknown[] = []
    const result = streamText({
      model: gateway('fake/fail-midstream'),
      prompt: 'one two three four',
      maxRetries: 0,
      onError: ({ error }) => void errors.push(error),
    })
    let text = ''
    let finish: string | undefined
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') text += part.text
      if (part.type === 'finish-step') finish = part.finishReason
    }
    expect(text).toBe('Hello from')
    expect(errors).toHaveLength(1)
    expect(APICallError.isInstance(errors[0])).toBe(true)
    expect(errors[0]).toMatchObject({ statusCode: 502 })
    expect(finish).toBe('error')
    // The fake counts the connection it dropped as closed early: counted here, not in the next test's figures.
    await expect.poll(() => f.upstream.aborted, { timeout: 3000 }).toBe(dropped + 1)
  })

  it('leaving fullStream early does not stop the model (the AI SDK reads it to its end): the whole answer is billed', async () => {
    const { gateway, user, spent } = await f.customer()
    const aborted = f.upstream.aborted
    const prompt = 'one two three four five six seven eight'
    const result = streamText({ model: gateway('fake/slow'), prompt, maxRetries: 0 })
    let text = ''
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') text += part.text
      if (words(text) === 2) break
    }
    expect(text).toBe('Hello from')
    const record = async () => (await f.t.gateway.admin.usage(user.org_id))[0]
    await expect.poll(async () => (await record())?.status, { timeout: 5000 }).toBe('success')
    expect(await record()).toMatchObject({ completion_tokens: words(`Hello from slow: ${prompt}`), finish_reason: 'stop' })
    expect(await spent()).toBe((await record()).cost_eur)
    expect(f.upstream.aborted).toBe(aborted)
  })

  it('cancelling the model’s own stream stops the upstream, and what was generated is billed', async () => {
    const { gateway, user, spent } = await f.customer()
    const aborted = f.upstream.aborted
    const { stream } = await gateway('fake/slow').doStream({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'one two three four five' }] }] })
    const reader = stream.getReader()
    const parts: any[] = []
    while (parts.filter((part) => part.type === 'text-delta').length < 2) parts.push((await reader.read()).value)
    await reader.cancel()
    expect(parts.map((part) => part.type)).toEqual(['stream-start', 'response-metadata', 'text-start', 'text-delta', 'text-delta'])
    expect(parts[1]).toMatchObject({ id: expect.stringMatching(/^gen-/), modelId: 'fake/slow', timestamp: expect.any(Date) })
    await expect.poll(() => f.upstream.aborted, { timeout: 3000 }).toBe(aborted + 1)
    const cancelled = async () => (await f.t.gateway.admin.usage(user.org_id)).find((r) => r.status === 'cancelled')
    await expect.poll(async () => (await cancelled())?.id, { timeout: 3000 }).toBe(parts[1].id)
    expect((await cancelled())!.completion_tokens).toBeGreaterThanOrEqual(2)
    expect(await spent()).toBe((await cancelled())!.cost_eur)
  })
})
