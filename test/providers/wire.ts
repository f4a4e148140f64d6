import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Reply } from './replay'

/** Reading the recorded wire fixtures of test/fixtures/wire/<provider>/ (see test/providers/README.md). */

const root = fileURLToPath(new URL('../fixtures/wire/', import.meta.url))

/** The text of a fixture file, e.g. `wireText('openai', 'chat-text.json')`. */
export const wireText = (provider: string, file: string): string => readFileSync(`${root}${provider}/${file}`, 'utf8')

/** A JSON fixture, parsed. */
export const wireJson = <T = any>(provider: string, file: string): T => JSON.parse(wireText(provider, file)) as T

/** An `.sse` fixture cut into its events, each with the blank line that ends it (one write per event on the replay server). */
export function wireEvents(provider: string, file: string): string[] {
  const text = wireText(provider, file)
  const separator = text.includes('\r\n\r\n') ? '\r\n\r\n' : '\n\n'
  return text
    .split(separator)
    .filter((event) => event.trim())
    .map((event) => event + separator)
}

/** The JSON `data:` payloads of an `.sse` fixture, in order (`[DONE]` left out). */
export const wireData = (provider: string, file: string): any[] =>
  wireEvents(provider, file)
    .flatMap((event) =>
      event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim()),
    )
    .filter((data) => data !== '[DONE]')
    .map((data) => JSON.parse(data))

/** A 200 answer with a JSON fixture as its body. */
export const jsonReply = (provider: string, file: string, headers: Record<string, string> = {}): Reply => ({ body: wireText(provider, file), headers })

/** A 200 event stream of an `.sse` fixture, one write per event. */
export const sseReply = (provider: string, file: string): Reply => ({ chunks: wireEvents(provider, file) })

/** An error answer: the status, a JSON fixture as its body, and headers (`retry-after`, …). */
export const errorReply = (status: number, provider: string, file: string, headers: Record<string, string> = {}): Reply => ({
  status,
  body: wireText(provider, file),
  headers,
})

/**
 * The wire of a provider that speaks OpenAI's chat format at `/v1`: its routes, bearer auth, and the whole and streamed
 * text and tool fixtures of `provider`, passed on as they came.
 */
export const openaiFormatWire = (provider: string) => ({
  routes: { chat: 'POST /v1/chat/completions', stream: 'POST /v1/chat/completions', check: 'GET /v1/models' },
  auth: (key: string): [string, string] => ['authorization', `Bearer ${key}`],
  chat: {
    text: { reply: jsonReply(provider, 'chat-text.json'), expected: wireJson(provider, 'chat-text.json') },
    tool: { reply: jsonReply(provider, 'chat-tool.json'), expected: wireJson(provider, 'chat-tool.json') },
  },
  stream: {
    text: { reply: sseReply(provider, 'stream-text.sse'), expected: wireData(provider, 'stream-text.sse') },
    tool: { reply: sseReply(provider, 'stream-tool.sse'), expected: wireData(provider, 'stream-tool.sse') },
  },
})
