import { describe, expect, it } from 'vitest'
import { openaiChunks } from '../../src/providers/openai-stream'

const provider = { slug: 'fake', name: 'Fake' }
const encode = (text: string) => new TextEncoder().encode(text)
const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`

/** A body that yields `parts` (after a turn of the event loop each) and records how it was read and returned. */
function bodyOf(parts: (string | Error)[]) {
  const seen = { reads: 0, returned: false }
  const body: AsyncIterable<Uint8Array> = {
    [Symbol.asyncIterator]() {
      let i = 0
      return {
        async next() {
          await new Promise((resolve) => setImmediate(resolve))
          seen.reads++
          if (i >= parts.length) return { value: undefined, done: true }
          const part = parts[i++]
          if (part instanceof Error) throw part
          return { value: encode(part), done: false }
        },
        async return() {
          seen.returned = true
          return { value: undefined, done: true }
        },
      }
    },
  }
  return { body, seen }
}

const contents = async (iterable: AsyncIterable<{ choices: { delta?: { content?: string } }[] }>) => {
  const out: string[] = []
  for await (const c of iterable) out.push(c.choices[0]?.delta?.content ?? '')
  return out
}

describe('openaiChunks', () => {
  it('yields every chunk, however the events fall across reads, and reads the body to its end after [DONE]', async () => {
    const all = `${chunk('a')}${chunk('b')}${chunk('c')}data: [DONE]\n\n`
    const { body, seen } = bodyOf([all.slice(0, 5), all.slice(5, 70), all.slice(70), ': trailing comment\n\n', chunk('after done')])
    expect(await contents(openaiChunks(body, provider))).toEqual(['a', 'b', 'c'])
    expect(seen.reads).toBe(6) // five parts and the end
    expect(seen.returned).toBe(false)
  })

  it('takes a last event the body ends without a blank line after', async () => {
    const { body } = bodyOf([chunk('a'), chunk('b').trimEnd()])
    expect(await contents(openaiChunks(body, provider))).toEqual(['a', 'b'])
  })

  it('answers calls made at once in order, each with its own chunk', async () => {
    const { body } = bodyOf([chunk('a'), `${chunk('b')}${chunk('c')}`, 'data: [DONE]\n\n'])
    const iterator = openaiChunks(body, provider)[Symbol.asyncIterator]()
    const results = await Promise.all([iterator.next(), iterator.next(), iterator.next(), iterator.next(), iterator.next()])
    expect(results.map((r) => (r.done ? 'done' : r.value.choices[0].delta?.content))).toEqual(['a', 'b', 'c', 'done', 'done'])
  })

  it('fails a stream with no chunk, a bad chunk (returning the body) and an error event', async () => {
    const empty = bodyOf(['data: [DONE]\n\n'])
    await expect(contents(openaiChunks(empty.body, provider))).rejects.toMatchObject({
      kind: 'malformed_response',
      metadata: { raw: 'the event stream ended without a chunk' },
    })

    const bad = bodyOf([`${chunk('a')}data: {"choices": [\n\n`, chunk('never read')])
    const iterator = openaiChunks(bad.body, provider)[Symbol.asyncIterator]()
    expect((await iterator.next()).done).toBe(false)
    await expect(iterator.next()).rejects.toMatchObject({ status: 502, kind: 'malformed_response' })
    expect(bad.seen.returned).toBe(true)
    expect(await iterator.next()).toEqual({ value: undefined, done: true })

    const errored = bodyOf([`data: ${JSON.stringify({ error: { message: 'overloaded' } })}\n\n`])
    await expect(contents(openaiChunks(errored.body, provider))).rejects.toMatchObject({
      kind: 'upstream_error',
      metadata: { raw: expect.stringMatching(/overloaded/) },
    })
  })

  it('passes the body’s own failure on without returning it, and returns the body when left early', async () => {
    const broken = bodyOf([chunk('a'), new Error('socket hang up')])
    const iterator = openaiChunks(broken.body, provider)[Symbol.asyncIterator]()
    expect((await iterator.next()).done).toBe(false)
    await expect(iterator.next()).rejects.toThrow('socket hang up')
    expect(broken.seen.returned).toBe(false)

    const left = bodyOf([`${chunk('a')}${chunk('b')}`, chunk('c')])
    const early = openaiChunks(left.body, provider)[Symbol.asyncIterator]()
    expect((await early.next()).value?.choices[0].delta?.content).toBe('a')
    // A return while a read waits for the body comes after it, as a generator's would.
    const [after, returned] = await Promise.all([early.next(), early.return!()])
    expect(after.value?.choices[0].delta?.content).toBe('b')
    expect(returned).toEqual({ value: undefined, done: true })
    expect(left.seen.returned).toBe(true)
    expect(await early.next()).toEqual({ value: undefined, done: true })
  })
})

/** A body whose parts are all in hand: `nextNow` answers them at once (as node:http's body does with a socket read's chunks). */
function bodyInHand(parts: (string | Error)[]) {
  let i = 0
  const take = (): IteratorResult<Uint8Array> => {
    if (i >= parts.length) return { value: undefined, done: true }
    const part = parts[i++]
    if (part instanceof Error) throw part
    return { value: encode(part), done: false }
  }
  const seen = { returned: false }
  const body: AsyncIterable<Uint8Array> = {
    [Symbol.asyncIterator]: () => ({
      nextNow: take,
      next: async () => take(),
      async return() {
        seen.returned = true
        return { value: undefined, done: true }
      },
    }),
  }
  return { body, seen }
}

type ChunksNow = AsyncIterator<{ choices: { delta?: { content?: string } }[] }> & {
  nextNow(): IteratorResult<{ choices: { delta?: { content?: string } }[] }> | undefined
}

describe('openaiChunks: chunks in hand at once (nextNow)', () => {
  it('answers every chunk of the events and body bytes in hand, then the end, with no promise', () => {
    const { body } = bodyInHand([`${chunk('a')}${chunk('b')}`, chunk('c'), 'data: [DONE]\n\n'])
    const iterator = openaiChunks(body, provider)[Symbol.asyncIterator]() as ChunksNow
    const out: string[] = []
    for (let next = iterator.nextNow(); next && !next.done; next = iterator.nextNow()) out.push(next.value.choices[0].delta?.content ?? '')
    expect(out).toEqual(['a', 'b', 'c'])
    expect(iterator.nextNow()).toEqual({ value: undefined, done: true })
  })

  it('answers undefined when the body has nothing in hand, and while a call waits for the body', async () => {
    const { body } = bodyOf([chunk('a'), chunk('b')])
    const iterator = openaiChunks(body, provider)[Symbol.asyncIterator]() as ChunksNow
    expect(iterator.nextNow()).toBeUndefined() // a body without nextNow: nothing is ever in hand before it is read
    const first = iterator.next()
    expect(iterator.nextNow()).toBeUndefined() // the call waiting for the body goes first
    expect((await first).value?.choices[0].delta?.content).toBe('a')
    expect((await iterator.next()).value?.choices[0].delta?.content).toBe('b')
  })

  it('throws a bad chunk (returning the body) and the body’s own failure, as next() rejects them', () => {
    const bad = bodyInHand([chunk('a'), 'data: {not json\n\n', chunk('c')])
    const iterator = openaiChunks(bad.body, provider)[Symbol.asyncIterator]() as ChunksNow
    expect(iterator.nextNow()?.value?.choices[0].delta?.content).toBe('a')
    expect(() => iterator.nextNow()).toThrow(expect.objectContaining({ status: 502, kind: 'malformed_response' }))
    expect(bad.seen.returned).toBe(true)
    expect(iterator.nextNow()).toEqual({ value: undefined, done: true })

    const broken = bodyInHand([chunk('a'), new Error('socket hang up')])
    const second = openaiChunks(broken.body, provider)[Symbol.asyncIterator]() as ChunksNow
    expect(second.nextNow()?.value?.choices[0].delta?.content).toBe('a')
    expect(() => second.nextNow()).toThrow('socket hang up')
    expect(broken.seen.returned).toBe(false)
  })

  it('fails a body that ends without a chunk', () => {
    const { body } = bodyInHand(['data: [DONE]\n\n'])
    const iterator = openaiChunks(body, provider)[Symbol.asyncIterator]() as ChunksNow
    expect(() => iterator.nextNow()).toThrow(
      expect.objectContaining({ kind: 'malformed_response', metadata: expect.objectContaining({ raw: 'the event stream ended without a chunk' }) }),
    )
  })
})
