import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { DEFAULT_SERVER_LIMITS, serve, type GatewayServer } from '../../adapters/node'
import { createGateway, openaiCompatible } from '../../src/index'
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai'
import { createCustomer, TEST_SECRET } from '../helpers/server'
import { readSse } from '../helpers/sse'

// node:http keeps the createServer option on the server, though @types/node does not declare it.
const headerSize = (s: GatewayServer) => (s.server as GatewayServer['server'] & { maxHeaderSize?: number }).maxHeaderSize
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A raw TCP connection to a server: what it received so far, and when it was closed. */
async function open(url: string) {
  const { port } = new URL(url)
  const socket: Socket = connect(Number(port), '127.0.0.1')
  const state = { received: '', closedAt: 0, socket }
  socket.setEncoding('utf8')
  socket.on('data', (chunk) => (state.received += chunk))
  socket.on('error', () => undefined) // a reset is one way of being closed
  socket.on('close', () => (state.closedAt = Date.now()))
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  return state
}

const until = async (check: () => boolean, ms: number) => {
  const end = Date.now() + ms
  while (!check() && Date.now() < end) await sleep(10)
  return check()
}

describe('serve() limits against slow clients', () => {
  const started: GatewayServer[] = []
  const fakes: FakeOpenAI[] = []
  afterEach(async () => {
    await Promise.all(started.splice(0).map((s) => s.close()))
    await Promise.all(fakes.splice(0).map((f) => f.close()))
  })
  const start = async (options: Parameters<typeof serve>[1], gateway = createGateway({ secret: TEST_SECRET, logger: false })) => {
    const server = await serve(gateway, { port: 0, hostname: '127.0.0.1', ...options })
    started.push(server)
    return server
  }

  it('has sane defaults, and every one can be overridden', async () => {
    const defaults = await start({})
    expect(defaults.server.headersTimeout).toBe(30_000)
    expect(defaults.server.requestTimeout).toBe(300_000)
    expect(defaults.server.keepAliveTimeout).toBe(5_000)
    expect(defaults.server.maxConnections).toBe(1024)
    expect(defaults.server.maxHeadersCount).toBe(100)
    expect(headerSize(defaults)).toBe(16 * 1024)
    expect(DEFAULT_SERVER_LIMITS.headersTimeout).toBe(30_000)
    const custom = await start({
      headersTimeout: 1_000,
      requestTimeout: 2_000,
      keepAliveTimeout: 70_000,
      maxConnections: 7,
      maxHeadersCount: 50,
      maxHeaderSize: 8192,
    })
    expect([
      custom.server.headersTimeout,
      custom.server.requestTimeout,
      custom.server.keepAliveTimeout,
      custom.server.maxConnections,
      custom.server.maxHeadersCount,
      headerSize(custom),
    ]).toEqual([1_000, 2_000, 70_000, 7, 50, 8192])
  })

  it('disconnects a client that sends its headers too slowly, even one line at a time', async () => {
    const { url } = await start({ headersTimeout: 300, requestTimeout: 5_000, connectionsCheckingInterval: 50 })
    const silent = await open(url)
    const dribbling = await open(url)
    const began = Date.now()
    dribbling.socket.write('GET /api/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n')
    const dribble = setInterval(() => dribbling.socket.writable && dribbling.socket.write(`X-Slow-${Date.now()}: 1\r\n`), 50)
    try {
      expect(await until(() => silent.closedAt > 0 && dribbling.closedAt > 0, 3_000)).toBe(true)
    } finally {
      clearInterval(dribble)
    }
    expect(dribbling.closedAt - began).toBeGreaterThanOrEqual(250)
    expect(dribbling.received).toMatch(/^HTTP\/1\.1 408 /)
    // A client that sends its request in time is answered as usual.
    expect((await fetch(`${url}/api/v1/models/count`)).status).toBe(200)
  })

  it('disconnects a client that sends its body too slowly', async () => {
    const { url } = await start({ headersTimeout: 200, requestTimeout: 400, connectionsCheckingInterval: 50 })
    const slow = await open(url)
    slow.socket.write('POST /api/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{')
    const drip = setInterval(() => slow.socket.writable && slow.socket.write(' '), 50)
    try {
      expect(await until(() => slow.closedAt > 0, 3_000)).toBe(true)
    } finally {
      clearInterval(drip)
    }
  })

  it('does not cut a streamed answer that lasts longer than requestTimeout', async () => {
    const upstream = await startFakeOpenAI({ apiKey: 'sk-up', slowMs: 150 })
    fakes.push(upstream)
    const gateway = createGateway({
      secret: TEST_SECRET,
      logger: false,
      providers: [
        openaiCompatible({
          slug: 'up',
          name: 'Up',
          baseURL: upstream.url,
          apiKey: 'sk-up',
          models: [{ id: 'up/slow', upstreamId: 'slow', name: 'Slow', pricing: { prompt: '0.000001', completion: '0.000001' } }],
        }),
      ],
    })
    const { url } = await start({ headersTimeout: 100, requestTimeout: 200, connectionsCheckingInterval: 25 }, gateway)
    const customer = await createCustomer(gateway, { credits: '1' })
    const began = Date.now()
    const res = await fetch(`${url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { ...customer.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'up/slow', stream: true, messages: [{ role: 'user', content: 'one two three four five' }] }),
    })
    const { events } = await readSse(res)
    expect(Date.now() - began).toBeGreaterThan(600)
    expect(events.at(-1)).toBe('[DONE]')
    expect(
      events
        .slice(0, -1)
        .map((e: any) => e.choices[0]?.delta?.content ?? '')
        .join(''),
    ).toContain('one two three four five')
  })

  it('closes connections beyond maxConnections at once, and accepts new ones when others have gone', async () => {
    const { url } = await start({ maxConnections: 2 })
    const first = await open(url)
    const second = await open(url)
    const third = await open(url)
    expect(await until(() => third.closedAt > 0, 2_000)).toBe(true)
    expect(third.received).toBe('')
    await sleep(50)
    expect(first.closedAt).toBe(0)
    expect(second.closedAt).toBe(0)
    first.socket.write('GET /api/v1/models/count HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')
    expect(await until(() => first.closedAt > 0, 2_000)).toBe(true)
    expect(first.received).toMatch(/^HTTP\/1\.1 200 /)
    second.socket.destroy()
    expect(await until(() => second.closedAt > 0, 1_000)).toBe(true)
    await sleep(50)
    expect((await fetch(`${url}/api/v1/models/count`, { headers: { connection: 'close' } })).status).toBe(200)
  })
})
