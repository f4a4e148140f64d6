import { measureDuration } from '../audio/formats'
import { sineTone, wavHeader } from '../audio/wav'
import { invalidRequest } from '../errors'
import { demoEmbeddingModel, demoEmbeddings } from './demo-embeddings'
import type { Provider, ProviderModel, UpstreamChatRequest, UpstreamChunk, UpstreamCompletion, UpstreamSpeech, UpstreamUsage } from '../contracts'

/** The demo model: answers offline, deterministically, priced like a small real model so billing can be seen. */
export const DEMO_MODEL_ID = 'demo/echo'
/** The demo speech model: a sine tone (WAV or PCM) whose length follows the input. */
export const DEMO_SPEECH_MODEL_ID = 'demo/speech'
/** The demo transcription model: describes the audio it received (its length and size). */
export const DEMO_TRANSCRIBE_MODEL_ID = 'demo/transcribe'

// A tone per voice, so that voices can be told apart.
const DEMO_VOICES: Record<string, number> = { alloy: 440, echo: 330, nova: 523.25 }
const DEMO_SAMPLE_RATE = 24_000
/** Seconds of demo speech per character of input (at speed 1), and the longest clip. */
const SECONDS_PER_CHARACTER = 0.05
const MAX_SPEECH_SECONDS = 30

/** The demo's audio models (listed when `demo({ audio: true })`). */
export const demoAudioModels: ProviderModel[] = [
  {
    id: DEMO_SPEECH_MODEL_ID,
    name: 'Demo: Speech (offline)',
    description: `A sine tone, ${SECONDS_PER_CHARACTER * 1000} ms per character of input (at most ${MAX_SPEECH_SECONDS} s), pitched by voice. response_format wav or pcm (24 kHz, 16-bit mono). Runs offline.`,
    pricing: { prompt: '0', completion: '0', character: '0.000015', currency: 'USD' },
    inputModalities: ['text'],
    outputModalities: ['audio'],
    supportedParameters: ['voice', 'speed', 'response_format'],
    supportedVoices: Object.keys(DEMO_VOICES),
    endpoints: ['/audio/speech'],
    created: 1767225600,
  },
  {
    id: DEMO_TRANSCRIBE_MODEL_ID,
    name: 'Demo: Transcribe (offline)',
    description: 'Answers a description of the audio it received: its format, length and size. Runs offline.',
    pricing: { prompt: '0', completion: '0', audio_second: '0.0001', currency: 'USD' },
    inputModalities: ['audio'],
    outputModalities: ['text'],
    supportedParameters: ['language', 'prompt', 'temperature', 'response_format'],
    endpoints: ['/audio/transcriptions'],
    created: 1767225600,
  },
]

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
  const named =
    typeof choice === 'object' && choice
      ? (choice as { function: { name: string } }).function.name
      : choice === 'required'
        ? tools[0]?.function.name
        : undefined
  if (named && last.role !== 'tool') {
    const args = JSON.stringify({ text: textOf(last.content) })
    return {
      content: null,
      toolCall: { id: `call_demo_${promptTokens}`, type: 'function', function: { name: named, arguments: args } },
      usage: usage(promptTokens, countTokens(args)),
    }
  }
  const content = last.role === 'tool' ? `The tool answered: ${textOf(last.content)}` : `Echo: ${textOf(last.content)}`
  const limit = (request.max_completion_tokens ?? request.max_tokens) as number | null | undefined
  const words = content.split(' ')
  const kept = limit ? words.slice(0, limit) : words
  return { content: kept.join(' '), usage: usage(promptTokens, kept.length) }
}

const usage = (prompt: number, completion: number): UpstreamUsage => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
})

/** What the demo provider serves besides `demo/echo`. */
export interface DemoOptions {
  /** Also list `demo/speech` and `demo/transcribe`. Default false. */
  audio?: boolean
  /** Also list `demo/embed`, deterministic unit-length vectors of the text (docs/embeddings.md#the-demo-model). Default false. */
  embeddings?: boolean
}

/**
 * An offline provider for the playground and tests: model `demo/echo` echoes the last message (or calls the named
 * tool); with `audio: true`, `demo/speech` and `demo/transcribe` too; with `embeddings: true`, `demo/embed`.
 */
export function demo(options: DemoOptions = {}): Provider {
  return {
    slug: 'demo',
    name: 'Demo (offline)',
    description: 'A built-in offline model that echoes your message. For trying the gateway without provider keys; not a real model.',
    byokSupported: false,
    region: 'local',
    models: [
      {
        id: DEMO_MODEL_ID,
        name: 'Demo: Echo (offline)',
        description: 'Echoes the last message back, word by word when streamed. Calls the tool named by tool_choice. Runs offline.',
        contextLength: 32_768,
        maxCompletionTokens: 4_096,
        pricing: { prompt: '0.0000001', completion: '0.0000002', currency: 'USD' },
        supportedParameters: ['max_tokens', 'max_completion_tokens', 'tools', 'tool_choice', 'stop', 'temperature', 'seed'],
        tags: ['trivia'],
        created: 1767225600,
      },
      ...(options.audio ? demoAudioModels : []),
      ...(options.embeddings ? [demoEmbeddingModel] : []),
    ],
    async chat(request): Promise<UpstreamCompletion> {
      const result = answer(request)
      return {
        id: 'demo',
        created: Math.floor(Date.now() / 1000),
        model: 'echo',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: result.content, ...(result.toolCall ? { tool_calls: [result.toolCall] } : {}) },
            finish_reason: result.toolCall ? 'tool_calls' : 'stop',
          },
        ],
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
          yield {
            ...base,
            choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id, type, function: { name: fn.name, arguments: '' } }] }, finish_reason: null }],
          }
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
    async speech(request, callOptions): Promise<UpstreamSpeech> {
      if (request.response_format !== 'wav' && request.response_format !== 'pcm') {
        throw invalidRequest(`response_format: the demo speech model produces wav or pcm only, not ${request.response_format}`, 'response_format')
      }
      const characters = [...request.input].length
      const seconds = Math.min(MAX_SPEECH_SECONDS, (characters * SECONDS_PER_CHARACTER) / (request.speed ?? 1))
      const pcm = sineTone(seconds, { sampleRate: DEMO_SAMPLE_RATE, frequency: DEMO_VOICES[request.voice ?? 'alloy'] ?? 440 })
      const parts = request.response_format === 'wav' ? [wavHeader(pcm.byteLength, DEMO_SAMPLE_RATE), pcm] : [pcm]
      return {
        id: 'demo',
        audio: (async function* () {
          for (const part of parts) {
            for (let at = 0; at < part.byteLength; at += 8192) {
              if (callOptions.signal.aborted) return
              yield part.subarray(at, at + 8192)
              await new Promise((resolve) => setImmediate(resolve))
            }
          }
        })(),
      }
    },
    async embed(request) {
      return demoEmbeddings(request)
    },
    async transcribe(request) {
      const { seconds, estimated } = measureDuration(request.audio, request.format)
      const text = `Demo transcript: ${seconds} seconds of ${request.format} audio, ${request.audio.byteLength} bytes.`
      return {
        id: 'demo',
        text,
        ...(request.response_format === 'verbose_json'
          ? { language: request.language ?? 'english', duration: seconds, segments: [{ id: 0, start: 0, end: seconds, text }] }
          : {}),
        // A length guessed from the size is not reported: the gateway then bills it as an estimate.
        usage: estimated ? null : { type: 'duration', seconds },
      }
    },
  }
}
