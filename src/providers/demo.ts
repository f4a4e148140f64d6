import type { Provider, UpstreamChatRequest, UpstreamChunk, UpstreamCompletion, UpstreamUsage } from './types'

/** The demo model: answers offline, deterministically, priced like a small real model so billing can be seen. */
export const DEMO_MODEL_ID = 'demo/echo'

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((part) => (part as { text?: string }).text ?? '').join(' ') : ''

const countTokens = (text: string) => Math.max(1, Math.ceil(text.length / 4))

interface DemoAnswer {
  content: string | null
  toolCall?: { id: string; type: 'function'; function: { name: string; arguments: string } }
  usage: UpstreamUsage
}

function answer(request: UpstreamChatRequest): DemoAnswer {
  const messages = request.messages as { role: string; content?: unknown; name?: string }[]
  const last = messages[messages.length - 1]
  const prompt = messages.map((m) => textOf(m.content)).join('\n')
  const promptTokens = countTokens(prompt) + messages.length * 3
  const choice = request.tool_choice
  const tools = (request.tools ?? []) as { function: { name: string } }[]
  const named = typeof choice === 'object' && choice ? (choice as { function: { name: string } }).function.name : choice === 'required' ? tools[0]?.function.name : undefined
  if (named && last.role !== 'tool') {
    const args = JSON.stringify({ text: textOf(last.content) })
    return { content: null, toolCall: { id: `call_demo_${promptTokens}`, type: 'function', function: { name: named, arguments: args } }, usage: usage(promptTokens, countTokens(args)) }
  }
  const content = last.role === 'tool' ? `The tool answered: ${textOf(last.content)}` : `Echo: ${textOf(last.content)}`
  const limit = (request.max_completion_tokens ?? request.max_tokens) as number | null | undefined
  const words = content.split(' ')
  const kept = limit ? words.slice(0, limit) : words
  return { content: kept.join(' '), usage: usage(promptTokens, kept.length) }
}

const usage = (prompt: number, completion: number): UpstreamUsage => ({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion })

/** An offline provider for the playground and tests: model `demo/echo` echoes the last message (or calls the named tool). */
export function demo(): Provider {
  return {
    slug: 'demo',
    name: 'Demo (offline)',
    description: 'A built-in offline model that echoes your message. For trying the gateway without provider keys; not a real model.',
    byokSupported: false,
    region: 'local',
    models: [{
      id: DEMO_MODEL_ID,
      name: 'Demo: Echo (offline)',
      description: 'Echoes the last message back, word by word when streamed. Calls the tool named by tool_choice. Runs offline.',
      contextLength: 32_768,
      maxCompletionTokens: 4_096,
      pricing: { prompt: '0.0000001', completion: '0.0000002', currency: 'USD' },
      supportedParameters: ['max_tokens', 'max_completion_tokens', 'tools', 'tool_choice', 'stop', 'temperature', 'seed'],
      tags: ['trivia'],
      created: 1767225600,
    }],
    async chat(request): Promise<UpstreamCompletion> {
      const result = answer(request)
      return {
        id: 'demo',
        created: Math.floor(Date.now() / 1000),
        model: 'echo',
        choices: [{
          index: 0,
          message: { role: 'assistant', content: result.content, ...(result.toolCall ? { tool_calls: [result.toolCall] } : {}) },
          finish_reason: result.toolCall ? 'tool_calls' : 'stop',
        }],
        usage: result.usage,
      }
    },
    async chatStream(request, options) {
      const result = answer(request)
      return (async function* (): AsyncIterable<UpstreamChunk> {
        const base = { id: 'demo', created: Math.floor(Date.now() / 1000), model: 'echo' }
        yield { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }
        if (result.toolCall) {
          const { id, type, function: fn } = result.toolCall
          yield { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id, type, function: { name: fn.name, arguments: '' } }] }, finish_reason: null }] }
          for (const piece of fn.arguments.match(/.{1,8}/g) ?? []) {
            yield { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] }, finish_reason: null }] }
          }
        } else {
          const words = (result.content ?? '').split(' ')
          for (let i = 0; i < words.length; i++) {
            if (options.signal.aborted) return
            await new Promise((resolve) => setImmediate(resolve))
            yield { ...base, choices: [{ index: 0, delta: { content: i === 0 ? words[i] : ` ${words[i]}` }, finish_reason: null }] }
          }
        }
        yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: result.toolCall ? 'tool_calls' : 'stop' }] }
        yield { ...base, choices: [], usage: result.usage }
      })()
    },
    async check() {
      return [{ target: 'in-process', ok: true, latency_ms: 0, message: 'the demo provider runs offline' }]
    },
  }
}
