/**
 * Namespace tools in POST /responses (docs/responses.md#namespace-tools), as Codex declares its multi-agent tools:
 * translated, each function tool of a namespace is a chat function tool `<namespace>__<name>` and its call comes back
 * as `{ name, namespace }` (whole and streamed), a call sent back with its namespace is that chat tool's call; natively,
 * the tools and the calls pass as OpenAI writes them. A named output answering no call (Codex's goal objective) is a
 * user message in chat. What cannot be served is a 400 naming it. Over real HTTP on 127.0.0.1 in front of the fake
 * OpenAI (test/fakes/openai.ts, its Responses API test/fakes/openai-responses.ts), which refuses tool types OpenAI's
 * APIs refuse.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ProviderModel } from '../../src/contracts'
import { openai } from '../../src/providers/openai'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { readSse } from '../helpers/sse'

const PRICING = { prompt: '0.000001', completion: '0.000002', currency: 'USD' }
const model = (id: string, upstreamId: string): ProviderModel => ({
  id,
  upstreamId,
  pricing: PRICING,
  maxCompletionTokens: 1000,
  supportedParameters: ['tools', 'tool_choice', 'max_tokens'],
})
const spawnAgent = {
  type: 'function',
  name: 'spawn_agent',
  description: 'Spawn a sub-agent',
  strict: false,
  parameters: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'], additionalProperties: false },
}
const NAMESPACE = { type: 'namespace', name: 'multi_agent_v1', description: 'Tools for sub-agents.', tools: [spawnAgent] }
const ARGS = JSON.stringify({ task: 'count the files' })

let fake: FakeOpenAI
let t: TestGateway
let auth: Record<string, string>

beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-upstream' })
  t = await startGateway({
    retry: { maxRetries: 0 },
    providers: [
      openai({ apiKey: 'sk-upstream', baseURL: fake.url, models: [model('openai/gpt-test', 'gpt-test')] }),
      openaiCompatible({ slug: 'compat', name: 'Compat', baseURL: fake.url, apiKey: 'sk-upstream', models: [model('compat/gpt-test', 'gpt-test')] }),
    ],
  })
  auth = (await createCustomer(t.gateway, { credits: '5' })).auth
})

afterAll(async () => {
  await t?.close()
  await fake?.close()
})

const post = (body: Record<string, unknown>) =>
  t.request('/api/v1/responses', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) })
const last = () => fake.requests.at(-1)!

describe('namespace tools, translated to chat', () => {
  it('become chat function tools `<namespace>__<name>`, and the call comes back with its namespace (whole)', async () => {
    fake.toolCalls = { multi_agent_v1__spawn_agent: ARGS }
    const res = await post({ model: 'compat/gpt-test', input: 'Spawn one', tools: [NAMESPACE], store: false })
    fake.toolCalls = {}
    expect(res.status).toBe(200)
    expect(last().path).toBe('/v1/chat/completions')
    expect(last().body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'multi_agent_v1__spawn_agent', description: 'Spawn a sub-agent', parameters: spawnAgent.parameters, strict: false },
      },
    ])
    const body = await res.json()
    expect(body.output).toHaveLength(1)
    expect(body.output[0]).toMatchObject({ type: 'function_call', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: ARGS, status: 'completed' })
    expect(body.output[0].call_id).toMatch(/^call_fake0/)
  })

  it('streamed: the function_call item carries its own name and namespace', async () => {
    fake.toolCalls = { multi_agent_v1__spawn_agent: ARGS }
    const res = await post({ model: 'compat/gpt-test', input: 'Spawn one', tools: [NAMESPACE], store: false, stream: true })
    fake.toolCalls = {}
    expect(res.status).toBe(200)
    const { events } = await readSse(res)
    const added = events.find((e) => e.type === 'response.output_item.added')
    expect(added.item).toMatchObject({ type: 'function_call', name: 'spawn_agent', namespace: 'multi_agent_v1', status: 'in_progress' })
    const done = events.find((e) => e.type === 'response.output_item.done')
    expect(done.item).toMatchObject({ type: 'function_call', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: ARGS })
    const completed = events.find((e) => e.type === 'response.completed')
    expect(completed.response.output[0]).toMatchObject({ name: 'spawn_agent', namespace: 'multi_agent_v1' })
  })

  it('a call sent back with its namespace is the chat tool’s call; a named output answering no call is a user message', async () => {
    const res = await post({
      model: 'compat/gpt-test',
      store: false,
      tools: [NAMESPACE],
      input: [
        { role: 'user', content: 'Spawn one' },
        { type: 'function_call', call_id: 'call_1', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: ARGS },
        { type: 'function_call_output', call_id: 'call_1', output: 'agent 7 started' },
        { type: 'function_call_output', name: 'goal_objective', namespace: 'agent', output: 'Count the files' },
      ],
    })
    expect(res.status).toBe(200)
    expect(last().body.messages).toEqual([
      { role: 'user', content: 'Spawn one' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'multi_agent_v1__spawn_agent', arguments: ARGS } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'agent 7 started' },
      { role: 'user', content: '[agent__goal_objective] Count the files' },
    ])
  })

  it('what cannot be served is a 400 naming it: another tool type inside, a name too long once joined, an output with neither call_id nor name', async () => {
    const custom = await post({ model: 'compat/gpt-test', input: 'x', tools: [{ ...NAMESPACE, tools: [{ type: 'custom', name: 'apply_patch' }] }] })
    expect(custom.status).toBe(400)
    expect((await custom.json()).error).toMatchObject({
      param: 'tools.0.tools.0.type',
      message:
        'tools.0.tools.0.type: "custom" is a built-in tool of OpenAI\'s that this gateway cannot run; only function tools ({ type: "function" }, also grouped in a { type: "namespace" }) are served',
    })
    const long = await post({
      model: 'compat/gpt-test',
      input: 'x',
      tools: [{ ...NAMESPACE, name: 'n'.repeat(40), tools: [{ ...spawnAgent, name: 'm'.repeat(30) }] }],
    })
    expect(long.status).toBe(400)
    expect((await long.json()).error.param).toBe('tools.0.tools.0.name')
    const empty = await post({ model: 'compat/gpt-test', input: 'x', tools: [{ ...NAMESPACE, tools: [] }] })
    expect(empty.status).toBe(400)
    expect((await empty.json()).error.param).toBe('tools.0.tools')
    const orphan = await post({
      model: 'compat/gpt-test',
      input: [
        { role: 'user', content: 'x' },
        { type: 'function_call_output', output: 'done' },
      ],
    })
    expect(orphan.status).toBe(400)
    expect((await orphan.json()).error).toMatchObject({ param: 'input.1.call_id', message: 'input.1.call_id: is required' })
  })
})

describe('namespace tools, natively to OpenAI', () => {
  it('pass on as sent, and OpenAI’s namespaced call comes back as it wrote it', async () => {
    fake.toolCalls = { spawn_agent: ARGS }
    const res = await post({ model: 'openai/gpt-test', input: 'Spawn one', tools: [NAMESPACE], store: false })
    fake.toolCalls = {}
    expect(res.status).toBe(200)
    expect(last().path).toBe('/v1/responses')
    expect(last().body.tools).toEqual([NAMESPACE])
    const body = await res.json()
    expect(body.output[0]).toMatchObject({ type: 'function_call', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: ARGS })
  })

  it('the named output answering no call is passed on as sent', async () => {
    const goal = { type: 'function_call_output', name: 'goal_objective', namespace: 'agent', output: 'Count the files' }
    const res = await post({ model: 'openai/gpt-test', store: false, input: [{ role: 'user', content: 'Go' }, goal] })
    expect(res.status).toBe(200)
    expect(last().body.input[1]).toEqual(goal)
  })
})

describe('the fake refuses what OpenAI refuses', () => {
  it('chat: a tool that is neither a function nor a custom tool', async () => {
    const res = await fetch(`${fake.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-upstream', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'x' }], tools: [NAMESPACE] }),
    })
    expect(res.status).toBe(400)
    expect((await res.json()).error).toMatchObject({ param: 'tools[0].type', code: 'invalid_value' })
  })

  it('Responses: an unknown tool type, and a namespace grouping a built-in tool', async () => {
    const send = (tools: unknown[]) =>
      fetch(`${fake.url}/responses`, {
        method: 'POST',
        headers: { authorization: 'Bearer sk-upstream', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-test', input: 'x', tools }),
      })
    const unknown = await send([{ type: 'telepathy' }])
    expect(unknown.status).toBe(400)
    expect((await unknown.json()).error).toMatchObject({ param: 'tools[0].type', code: 'invalid_value' })
    const grouped = await send([{ ...NAMESPACE, tools: [{ type: 'web_search' }] }])
    expect(grouped.status).toBe(400)
    expect((await grouped.json()).error).toMatchObject({ param: 'tools[0].tools[0].type', code: 'invalid_value' })
  })
})
