import { describe, expect, it } from 'vitest'
import { createSseParser, parseServerSentEvents } from '../../src/providers/sse'

async function parse(chunks: string[]) {
  const source = (async function* () {
    for (const chunk of chunks) yield new TextEncoder().encode(chunk)
  })()
  const events = []
  for await (const event of parseServerSentEvents(source)) events.push(event)
  return events
}

describe('parseServerSentEvents', () => {
  it('splits events across any chunking and line ending', async () => {
    const text = 'data: {"a":1}\n\ndata: {"b":2}\r\n\r\nevent: ping\ndata: x\rdata: y\r\r'
    const expected = [{ data: '{"a":1}' }, { data: '{"b":2}' }, { event: 'ping', data: 'x\ny' }]
    for (const size of [1, 2, 3, 7, text.length]) {
      const chunks = text.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g'))!
      const events = await parse(chunks)
      expect(
        events.map((e) => (e.event ? e : { data: e.data })),
        `chunks of ${size}`,
      ).toEqual(expected)
    }
  })

  it('skips comments and keeps a last event without a blank line', async () => {
    expect(await parse([': keep-alive\n\n', 'data: [DONE]'])).toEqual([{ event: undefined, data: '[DONE]' }])
  })

  it('decodes UTF-8 split inside a character', async () => {
    const bytes = new TextEncoder().encode('data: héllo ✓\n\n')
    const source = (async function* () {
      for (const byte of bytes) yield new Uint8Array([byte])
    })()
    const events = []
    for await (const event of parseServerSentEvents(source)) events.push(event.data)
    expect(events).toEqual(['héllo ✓'])
  })
})

describe('createSseParser with comments', () => {
  it('reports keep-alive comments in their place among the events, split anywhere; without the option skips them', () => {
    const text = ': keep-alive\n\ndata: {"a":1}\n\n:ping\r\ndata: [DONE]\n\n'
    const bytes = new TextEncoder().encode(text)
    for (const size of [1, 5, bytes.length]) {
      const parser = createSseParser({ comments: true })
      const events = []
      for (let at = 0; at < bytes.length; at += size) events.push(...parser.push(bytes.subarray(at, at + size)))
      events.push(...parser.end())
      expect(events).toEqual([
        { data: '', comment: ' keep-alive' },
        { event: undefined, data: '{"a":1}' },
        { data: '', comment: 'ping' },
        { event: undefined, data: '[DONE]' },
      ])
    }
    const plain = createSseParser()
    expect([...plain.push(bytes), ...plain.end()].map((e) => e.data)).toEqual(['{"a":1}', '[DONE]'])
  })
})
