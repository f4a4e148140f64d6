import { describe, expect, it } from 'vitest'
import { prng } from '../helpers/fuzz'
import { promptFacts } from '../../src/chat/max-cost'
import { jsonByteLength } from '../../src/http/json-size'
import type { ChatRequest } from '../../src/schemas/chat'

// A hold measures a prompt by the UTF-8 bytes of its JSON (docs/money.md), now counted without writing the text
// (src/http/json-size.ts): every count must be the byte length of JSON.stringify's text, and the cache writes a
// request asks for what the text search before found, or longer (never a cheaper hold).

const PIECES = [
  'a',
  'é',
  '€',
  '😀',
  '"',
  '\\',
  '\n',
  '\r',
  '\t',
  '\b',
  '\f',
  '\u0000',
  '\u0007',
  '\u000b',
  '\u001f',
  '\ud800',
  '\udc00',
  '\ud83d',
  '/',
  ' ',
  '<',
]
const NUMBERS = [0, -0, 1, -1.5, 0.1, 1e21, 1e-7, 123456789.125, Number.MAX_SAFE_INTEGER, Number.NaN, Number.POSITIVE_INFINITY, 5e-324]

function randomValue(next: () => number, depth: number): unknown {
  const kind = Math.floor(next() * (depth > 3 ? 6 : 9))
  switch (kind) {
    case 0: {
      let text = ''
      for (let i = Math.floor(next() * 12); i > 0; i--) text += PIECES[Math.floor(next() * PIECES.length)]
      // A long text too (a short one is settled by one test, a long one counted escape by escape).
      return next() < 0.3 ? text.repeat(40) : text
    }
    case 1:
      return NUMBERS[Math.floor(next() * NUMBERS.length)]
    case 2:
      return next() < 0.5
    case 3:
      return null
    case 4:
      return undefined
    case 5:
      return next() < 0.5 ? () => 1 : Symbol('s')
    case 6:
    case 7: {
      const object: Record<string, unknown> = {}
      for (let i = Math.floor(next() * 4); i > 0; i--) object[String(randomValue(next, 9) ?? 'k')] = randomValue(next, depth + 1)
      return object
    }
    default: {
      const array: unknown[] = []
      for (let i = Math.floor(next() * 4); i > 0; i--) array.push(randomValue(next, depth + 1))
      if (next() < 0.2) array.length += 2 // holes
      return array
    }
  }
}

const stringifiedBytes = (value: unknown) => {
  const text = JSON.stringify(value) as string | undefined
  return text === undefined ? 0 : Buffer.byteLength(text, 'utf8')
}

describe('jsonByteLength', () => {
  it('is the UTF-8 byte length of JSON.stringify over 20,000 random values (escapes, lone surrogates, holes, left-out values)', () => {
    for (let seed = 1; seed <= 20_000; seed++) {
      const value = randomValue(prng(seed).next, 0)
      const expected = stringifiedBytes(value)
      if (jsonByteLength(value) !== expected) throw new Error(`seed ${seed}: ${jsonByteLength(value)} bytes, JSON.stringify's ${expected}`)
    }
  })

  it('measures what is not plain data as JSON.stringify does (toJSON, boxed values), and refuses what it refuses', () => {
    const values = [{ at: new Date(0) }, [new String('x'), new Number(2), new Boolean(false)], { nested: { toJSON: () => 'short' } }, new Map([[1, 2]])]
    for (const value of values) expect(jsonByteLength(value)).toBe(stringifiedBytes(value))
    expect(() => jsonByteLength({ n: 1n })).toThrow(TypeError)
    const circular: Record<string, unknown> = {}
    circular.self = circular
    expect(() => jsonByteLength(circular)).toThrow(TypeError)
  })
})

// The cache writes as the hold found them before: a text search of the messages' and tools' JSON.
function textCacheWrites(request: ChatRequest): 'none' | '5m' | '1h' {
  const messages = JSON.stringify(request.messages)
  const tools = request.tools ? JSON.stringify(request.tools) : ''
  const top = request.cache_control as { ttl?: string } | undefined
  const cached = top !== undefined || messages.includes('"cache_control"') || tools.includes('"cache_control"')
  const hour = top?.ttl === '1h' || (cached && /"cache_control":\{[^}]*"ttl":"1h"/.test(messages + tools))
  return hour ? '1h' : cached ? '5m' : 'none'
}

describe('promptFacts', () => {
  const RANK = { none: 0, '5m': 1, '1h': 2 }
  const controls = [
    undefined,
    { type: 'ephemeral' },
    { type: 'ephemeral', ttl: '1h' },
    { type: 'ephemeral', ttl: '5m' },
    { ttl: '1h', type: 'ephemeral' },
    null,
    'x',
  ]

  it('asks for the cache writes the text search found, over every place and ttl of cache_control', () => {
    for (const top of [undefined, { type: 'ephemeral' }, { type: 'ephemeral', ttl: '1h' }])
      for (const onPart of controls)
        for (const onMessage of controls)
          for (const onTool of controls) {
            const request = {
              model: 'm',
              messages: [
                { role: 'system', content: 'You help. "cache_control":{"ttl":"1h"} is text here.' },
                {
                  role: 'user',
                  content: [{ type: 'text', text: 'hi', ...(onPart !== undefined ? { cache_control: onPart } : {}) }],
                  ...(onMessage !== undefined ? { cache_control: onMessage } : {}),
                },
              ],
              tools: [
                { type: 'function', function: { name: 'f', parameters: { type: 'object' } }, ...(onTool !== undefined ? { cache_control: onTool } : {}) },
              ],
              ...(top !== undefined ? { cache_control: top } : {}),
            } as unknown as ChatRequest
            expect(promptFacts(request).cacheWrites, JSON.stringify({ top, onPart, onMessage, onTool })).toBe(textCacheWrites(request))
          }
  })

  it('asks for an hour where the text search missed one nested deeper, never for less', () => {
    const request = {
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral', extra: {}, ttl: '1h' } }] }],
    } as unknown as ChatRequest
    expect(textCacheWrites(request)).toBe('5m')
    expect(RANK[promptFacts(request).cacheWrites]).toBeGreaterThanOrEqual(RANK[textCacheWrites(request)])
    expect(promptFacts(request).cacheWrites).toBe('1h')
  })

  it('takes a message whose text is "cache_control" for text, not for a breakpoint (the text search did)', () => {
    const request = { model: 'm', messages: [{ role: 'user', content: 'cache_control' }] } as unknown as ChatRequest
    expect(textCacheWrites(request)).toBe('5m')
    expect(promptFacts(request).cacheWrites).toBe('none')
  })

  it('counts a long prompt’s tokens as a third of its JSON’s bytes', () => {
    const text = 'Some code: if (a === "b") { return `c\\n` }\n'.repeat(1_500)
    const request = {
      model: 'm',
      messages: [{ role: 'user', content: text }],
      tools: [{ type: 'function', function: { name: 'f' } }],
    } as unknown as ChatRequest
    const bytes = Buffer.byteLength(JSON.stringify(request.messages)) + Buffer.byteLength(JSON.stringify(request.tools))
    expect(promptFacts(request).tokens).toBe(Math.ceil(bytes / 3))
  })
})
