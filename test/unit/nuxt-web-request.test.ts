// The Nuxt module's route handler turns each request of the app's Nitro server (an h3 v1 event) into the web Request
// the gateway serves without importing h3 (adapters/nuxt/runtime/web-request.ts): the same URL, method, headers and
// body as h3 v1's toWebRequest, for a request read from the socket and for one of Nitro's internal fetch (a body given
// on the message), and a signal that aborts when the client goes away.
import { readdirSync, readFileSync } from 'node:fs'
import { createServer, IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join, resolve } from 'node:path'
import { Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { type NitroEvent, type NitroIncomingMessage, toWebRequest } from '../../adapters/nuxt/runtime/web-request'

/** An event as h3 v1 makes one from Node's request and response. */
const eventOf = (req: NitroIncomingMessage, res?: ServerResponse): NitroEvent => ({
  method: (req.method || 'GET').toUpperCase(),
  path: req.url || '/',
  headers: new Headers(Object.entries(req.headers).flatMap(([name, value]) => (typeof value === 'string' ? [[name, value] as [string, string]] : []))),
  node: { req, res },
})

let server: Server | undefined
afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())))

/** A server answering what the Request made of each of its requests looks like; `seen` gets each Request. */
async function listen(seen: (request: Request) => void = () => {}): Promise<string> {
  server = createServer(async (req, res) => {
    const request = toWebRequest(eventOf(req, res))
    seen(request)
    const body = request.body ? await request.text() : null
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ url: request.url, method: request.method, type: request.headers.get('content-type'), body }))
  })
  await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** A message as Nitro's internal fetch makes one: no socket to read, the body on the message. */
function internalMessage(method: string, body: unknown, headers: Record<string, string> = {}): NitroIncomingMessage {
  const req = new IncomingMessage(new Socket()) as NitroIncomingMessage
  req.method = method
  req.url = '/api/v1/chat/completions'
  req.headers = { host: 'localhost:3000', ...headers }
  req.__unenv__ = {}
  req.body = body
  return req
}

describe('an h3 v1 event as a web Request (Nuxt module)', () => {
  it('keeps the URL, the method, the headers and the streamed body of a request read from the socket', async () => {
    const url = await listen()
    const res = await fetch(`${url}/api/v1/chat/completions?x=1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' })
    expect(await res.json()).toEqual({ url: `${url}/api/v1/chat/completions?x=1`, method: 'POST', type: 'application/json', body: '{"a":1}' })
  })

  it('has no body for GET, and says https behind a proxy that says so (x-forwarded-proto), as h3 v1 does', async () => {
    const url = await listen()
    const res = await fetch(`${url}/api/v1/models`, { headers: { 'x-forwarded-proto': 'https' } })
    expect(await res.json()).toEqual({ url: `https://${new URL(url).host}/api/v1/models`, method: 'GET', type: null, body: null })
  })

  it('reads a body given on the message (Nitro’s internal fetch): text, bytes, and a plain object as JSON', async () => {
    for (const [body, text] of [
      ['{"model":"demo/echo"}', '{"model":"demo/echo"}'],
      [Buffer.from('bytes'), 'bytes'],
      [{ model: 'demo/echo' }, '{"model":"demo/echo"}'],
    ] as const) {
      const request = toWebRequest(eventOf(internalMessage('POST', body, { 'content-type': 'application/json' })))
      expect(request.url).toBe('http://localhost:3000/api/v1/chat/completions')
      expect(await request.text()).toBe(text)
    }
  })

  it('has an empty body for a message with none and no length (no wait on a socket that never ends)', async () => {
    const request = toWebRequest(eventOf(internalMessage('POST', undefined)))
    expect(await request.text()).toBe('')
  })

  it('gives the request of an event made from a web Request as it is', () => {
    const web = new Request('http://localhost/api/v1/models')
    expect(toWebRequest({ ...eventOf(internalMessage('GET', undefined)), web: { request: web } })).toBe(web)
  })

  it('aborts the signal when the client goes away before the answer', async () => {
    let received: Request | undefined
    server = createServer((req, res) => {
      received = toWebRequest(eventOf(req, res))
    })
    await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done))
    const client = new AbortController()
    const pending = fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/models`, { signal: client.signal }).catch(() => undefined)
    while (!received) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(received.signal.aborted).toBe(false)
    client.abort()
    await pending
    while (!received.signal.aborted) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(received.signal.aborted).toBe(true)
    server.closeAllConnections()
  })

  it('is the only way the runtime meets h3: no file of adapters/nuxt/runtime imports it', () => {
    const dir = resolve(import.meta.dirname, '../../adapters/nuxt/runtime')
    const importing = readdirSync(dir).filter((file) => /\bfrom\s+['"]h3(\/[^'"]*)?['"]/.test(readFileSync(join(dir, file), 'utf8')))
    expect(importing).toEqual([])
  })
})
