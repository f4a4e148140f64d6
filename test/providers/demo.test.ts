import { describe, expect, it } from 'vitest'
import { demo, DEMO_MODEL_ID } from '../../src/index'
import { callOptions, drain, finishReasons, streamedArguments, streamedText } from './calls'
import { textRequest, toolRequest } from './contract'

// The offline demo provider has no wire: the behavioural part of the contract (whole answer, stream, tool call, abort).
const provider = demo()
const MODEL = 'echo'
const base = { id: 'demo', created: expect.any(Number), model: 'echo' }
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })
const named = { ...toolRequest(MODEL), tool_choice: { type: 'function' as const, function: { name: 'get_weather' } } }

describe('provider contract (behaviour): demo()', () => {
  it('serves demo/echo', () => {
    expect([provider.slug, provider.models[0].id, provider.byokSupported]).toEqual(['demo', DEMO_MODEL_ID, false])
  })

  it('a whole answer echoes the last message, with usage', async () => {
    expect(await provider.chat(textRequest(MODEL), callOptions())).toEqual({
      ...base,
      choices: [{ index: 0, message: { role: 'assistant', content: 'Echo: What is the capital of France?' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 },
    })
  })

  it('max_tokens cuts the answer to that many words', async () => {
    const completion = await provider.chat({ ...textRequest(MODEL), max_tokens: 3 }, callOptions())
    expect([completion.choices[0].message.content, completion.usage?.completion_tokens]).toEqual(['Echo: What is', 3])
  })

  it('a stream → the role chunk, one chunk per word, the finish, then usage last', async () => {
    const { chunks, error } = await drain(await provider.chatStream(textRequest(MODEL), callOptions()))
    expect(error).toBeUndefined()
    expect(chunks).toEqual([
      chunk({ role: 'assistant', content: '' }),
      ...['Echo:', ' What', ' is', ' the', ' capital', ' of', ' France?'].map((word) => chunk({ content: word })),
      chunk({}, 'stop'),
      { ...base, choices: [], usage: { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 } },
    ])
    expect(streamedText(chunks)).toBe((await provider.chat(textRequest(MODEL), callOptions())).choices[0].message.content)
  })

  it('a named tool_choice → a call of that tool, whole and streamed alike', async () => {
    const completion = await provider.chat(named, callOptions())
    const calls = completion.choices[0].message.tool_calls as { id: string; function: { name: string; arguments: string } }[]
    expect([completion.choices[0].finish_reason, calls[0].function.name, JSON.parse(calls[0].function.arguments)]).toEqual([
      'tool_calls',
      'get_weather',
      { text: "What's the weather in Paris?" },
    ])
    const { chunks } = await drain(await provider.chatStream(named, callOptions()))
    expect(streamedArguments(chunks)).toBe(calls[0].function.arguments)
    expect(finishReasons(chunks)).toEqual(['tool_calls'])
    expect(chunks.at(-1)!.usage).toEqual(completion.usage)
  })

  it('tool_choice auto (none named) → a text answer, not a call', async () => {
    const completion = await provider.chat(toolRequest(MODEL), callOptions())
    expect([completion.choices[0].message.content, completion.choices[0].message.tool_calls]).toEqual(["Echo: What's the weather in Paris?", undefined])
  })

  it('an aborted signal stops the stream before its finish', async () => {
    const controller = new AbortController()
    const stream = await provider.chatStream(textRequest(MODEL), callOptions({ signal: controller.signal }))
    const chunks = []
    for await (const c of stream) {
      chunks.push(c)
      if (chunks.length === 2) controller.abort()
    }
    expect(chunks).toHaveLength(2)
    expect(finishReasons(chunks)).toEqual([])
  })

  it('check() answers offline', async () => {
    expect(await provider.check!(callOptions())).toEqual([{ target: 'in-process', ok: true, latency_ms: 0, message: 'the demo provider runs offline' }])
  })
})
