import { createServer } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anthropic, demo, gemini, hostedProvider, localProvider, openai, openaiCompatible } from '../../src/index'
import { listenOnLoopback } from '../fakes/listen'
import { startGateway, type TestGateway } from '../helpers/server'

const JAN_2020 = 1_577_836_800
const nowSeconds = () => Math.floor(Date.now() / 1000)
const nowhere = 'http://127.0.0.1:9/v1'

describe('every catalogue model has a real `created` date', () => {
  let t: TestGateway
  let local: { origin: string; close: () => Promise<void> }
  let localModels: { id: string; created?: number }[] = [{ id: 'undated:7b' }, { id: 'zero:3b', created: 0 }, { id: 'dated:1b', created: 1_700_000_000 }]
  let startedAt: number

  beforeAll(async () => {
    // A local server whose GET /models gives no date (as some do), 0, or a date of its own.
    local = await listenOnLoopback(
      createServer((req, res) => {
        res.writeHead(req.url === '/v1/models' ? 200 : 404, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ object: 'list', data: localModels.map((m) => ({ object: 'model', owned_by: 'me', ...m })) }))
      }),
    )
    startedAt = nowSeconds()
    t = await startGateway({
      modelRefreshSeconds: 1,
      providers: [
        openai({ baseURL: nowhere }),
        anthropic({ baseURL: 'http://127.0.0.1:9' }),
        gemini({ baseURL: 'http://127.0.0.1:9' }),
        ...(['groq', 'together', 'fireworks', 'mistral', 'deepseek', 'xai'] as const).map((slug) => hostedProvider(slug, { baseURL: nowhere })),
        demo({ audio: true }),
        openaiCompatible({
          slug: 'my-vllm',
          name: 'My vLLM',
          baseURL: nowhere,
          models: [
            { id: 'qwen/qwen2.5-72b-instruct', pricing: { prompt: '0.0000004', completion: '0.0000012' } },
            { id: 'mine/dated', pricing: { prompt: '0', completion: '0' }, created: 1_726_000_000 },
          ],
        }),
        localProvider({ slug: 'ollama', name: 'Ollama', baseURL: `${local.origin}/v1` }),
      ],
    })
  })
  afterAll(async () => {
    await t.close()
    await local.close()
  })

  const models = async () => {
    const res = await t.request('/api/v1/models')
    expect(res.status).toBe(200)
    return (await res.json()).data as { id: string; created: number; release_date: string | null }[]
  }
  const byId = async () => new Map((await models()).map((m) => [m.id, m]))

  it('lists every model, built-in, configured and discovered, with an integer `created` after 2020 and not in the future', async () => {
    const all = await models()
    // About 30 stay once every announced retirement has passed (OpenAI's older and audio models go by 2027-02-26).
    expect(all.length).toBeGreaterThan(25)
    const now = nowSeconds()
    const bad = all.filter((m) => !Number.isInteger(m.created) || m.created <= JAN_2020 || m.created > now)
    expect(bad.map((m) => `${m.id}: ${m.created}`)).toEqual([])
  })

  it('dates the Claude models that had none on the day Anthropic released them', async () => {
    const all = await byId()
    expect(all.get('anthropic/claude-opus-5.5')).toMatchObject({ created: 1_790_035_200, release_date: '2026-09-22' })
    expect(all.get('anthropic/claude-sonnet-5.5')).toMatchObject({ created: 1_790_553_600, release_date: '2026-09-28' })
    expect(all.get('openai/gpt-6-luna')).toMatchObject({ created: 1_790_035_200, release_date: '2026-09-22' })
  })

  it('shows a model configured or discovered without a date with the time the gateway first listed it', async () => {
    const all = await byId()
    const now = nowSeconds()
    for (const id of ['qwen/qwen2.5-72b-instruct', 'ollama/undated:7b', 'ollama/zero:3b']) {
      const model = all.get(id)!
      expect(model.created, id).toBeGreaterThanOrEqual(startedAt)
      expect(model.created, id).toBeLessThanOrEqual(now)
      expect(model.release_date, id).toBeNull()
    }
    // Dates given by the host or by the server are kept.
    expect(all.get('mine/dated')).toMatchObject({ created: 1_726_000_000, release_date: '2024-09-10' })
    expect(all.get('ollama/dated:1b')).toMatchObject({ created: 1_700_000_000 })
  })

  it('keeps the first-listed time across refreshes; a model found later gets its own', async () => {
    const first = await byId()
    localModels = [...localModels, { id: 'later:14b' }]
    await new Promise((resolve) => setTimeout(resolve, 2_100))
    const second = await byId()
    for (const id of ['qwen/qwen2.5-72b-instruct', 'ollama/undated:7b', 'ollama/zero:3b']) expect(second.get(id)!.created, id).toBe(first.get(id)!.created)
    const later = second.get('ollama/later:14b')!
    expect(later.created).toBeGreaterThan(first.get('ollama/undated:7b')!.created)
    expect(later.created).toBeLessThanOrEqual(nowSeconds())
  })
})
