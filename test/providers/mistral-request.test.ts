import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { hostedProvider } from '../../src/index'
import { callOptions, drain } from './calls'
import { textRequest } from './contract'
import { startReplay, type Replay } from './replay'
import { jsonReply, sseReply } from './wire'

// Mistral's own request fields (its chat completion reference): `random_seed` for OpenAI's `seed`, `max_tokens` for
// `max_completion_tokens`, no `user` and no `stream_options` (its last chunk carries the usage anyway).
const MODEL = 'mistral-small-latest'
const ROUTE = 'POST /v1/chat/completions'

describe("hostedProvider('mistral'): the request in Mistral's terms", () => {
  let replay: Replay
  beforeAll(async () => {
    replay = await startReplay()
  })
  afterAll(() => replay.close())
  beforeEach(() => replay.reset())
  const provider = () => hostedProvider('mistral', { baseURL: `${replay.origin}/v1`, apiKey: 'sk-service-test', models: [] })

  it('seed → random_seed, max_completion_tokens → max_tokens, user left out', async () => {
    replay.on(ROUTE, jsonReply('mistral', 'chat-text.json'))
    const { max_tokens: _max, ...request } = textRequest(MODEL)
    await provider().chat({ ...request, seed: 42, max_completion_tokens: 128 }, callOptions())
    const { messages: _messages, ...sent } = replay.requests[0].body
    expect(sent).toEqual({ model: MODEL, random_seed: 42, max_tokens: 128, temperature: 0.2, stop: ['\n\n'] })
  })

  it('a stream asks stream: true without stream_options, and still ends with the usage Mistral sends', async () => {
    replay.on(ROUTE, sseReply('mistral', 'stream-text.sse'))
    const { chunks } = await drain(await provider().chatStream({ ...textRequest(MODEL), seed: 7 }, callOptions()))
    expect(replay.requests[0].body).toMatchObject({ stream: true, random_seed: 7 })
    expect(Object.keys(replay.requests[0].body)).not.toContain('stream_options')
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 14, total_tokens: 22, completion_tokens: 8 })
  })
})
