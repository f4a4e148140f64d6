/**
 * The node:http transport's body answers the chunks it already holds at once (`nextNow`): a socket read often brings
 * several of an event stream's chunks, which a stream's body then sends in one go with no promise each
 * (docs/performance.md#where-the-time-goes). Against a real server on 127.0.0.1: the chunks in order, the end, and a
 * connection cut mid-body failing after the chunks that came before it, as `next()` does.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import type { ChunkIterator } from '../../src/contracts'
import { upstreamFetch } from '../../src/providers/http'

let server: Server | undefined
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())))

/** A server that writes `parts` at once (each its own chunk of the chunked body), then ends or cuts the connection. */
async function serve(parts: string[], end: 'end' | 'cut'): Promise<string> {
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    for (const part of parts) res.write(part)
    if (end === 'end') res.end()
    else setTimeout(() => res.socket?.destroy(), 20)
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
}

const provider = { slug: 'fake', name: 'Fake' }
const open = async (url: string) => {
  const res = await upstreamFetch(url, { method: 'GET', signal: new AbortController().signal, timeoutMs: 5000, provider })
  return res.body[Symbol.asyncIterator]() as ChunkIterator<Uint8Array>
}
const text = (result: IteratorResult<Uint8Array> | undefined) => (result && !result.done ? Buffer.from(result.value).toString() : result)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('the node:http body: chunks in hand', () => {
  it('answers the chunks it holds at once, in order, then the end; undefined while one must be waited for', async () => {
    const body = await open(await serve(['data: a\n\n', 'data: b\n\n', 'data: c\n\n'], 'end'))
    await sleep(50) // every chunk and the end have arrived
    const seen: unknown[] = []
    for (let next = body.nextNow!(); next && !next.done; next = body.nextNow!()) seen.push(text(next))
    expect(seen.join('')).toBe('data: a\n\ndata: b\n\ndata: c\n\n')
    expect(body.nextNow!()).toEqual({ value: undefined, done: true })
    expect(await body.next()).toEqual({ value: undefined, done: true })
  })

  it('answers undefined before anything arrived, and while next() waits', async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.flushHeaders()
      setTimeout(() => res.end('data: late\n\n'), 100)
    })
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
    const body = await open(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
    expect(body.nextNow!()).toBeUndefined()
    const waiting = body.next()
    expect(body.nextNow!()).toBeUndefined() // the waiting call goes first
    expect(text(await waiting)).toBe('data: late\n\n') // the chunk went to it, not to a later nextNow
    await sleep(20)
    expect(body.nextNow!()).toEqual({ value: undefined, done: true })
  })

  it('fails a body cut mid-way after the chunks that came before the cut', async () => {
    const body = await open(await serve(['data: a\n\n', 'data: b\n\n'], 'cut'))
    await sleep(100)
    expect(text(body.nextNow!())).toBe('data: a\n\n')
    expect(text(body.nextNow!())).toBe('data: b\n\n')
    expect(() => body.nextNow!()).toThrow(expect.objectContaining({ kind: 'provider_unavailable' }))
    await expect(body.next()).rejects.toMatchObject({ kind: 'provider_unavailable' })
  })
})
