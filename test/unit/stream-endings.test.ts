import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway, type Gateway } from '../../src/index'
import { GatewayError } from '../../src/errors'
import { createInFlight } from '../../src/http/in-flight'
import { openaiCompatible } from '../../src/providers/openai-compatible'
import type { UpstreamUsage } from '../../src/contracts'
import type { Attempt } from '../../src/routing/plan'
import { createStreamBody } from '../../src/pipeline/stream-body'
import type { OpenedStream, StreamDialect, StreamTally } from '../../src/pipeline/stream-dialect'
import { createStreamMachine } from '../../src/pipeline/stream-state'

// The settled stream's body (src/pipeline/stream-body.ts) driven through every way it ends, over a provider's stream
// the test feeds chunk by chunk and a dialect that writes plain lines: for each, the bytes the client received and
// exactly one settlement (charged with its status and reported or estimated usage, or released), after which nothing
// of the stream is in flight. The integration tests (aborted-streams, drain, holds, chat, messages,
// responses-native) prove the same endings over HTTP, with real billing.

interface Chunk {
  text?: string
  usage?: UpstreamUsage
}

/** What the settlement was asked, once: a charge (its status, the usage it billed, the text it knew), or a release. */
type Settled = { charged: 'success' | 'error' | 'cancelled'; usage: 'reported' | 'estimated'; chars: number } | 'released'

const KEEP_ALIVE = ': service processing\n\n'
const INTERNAL = 'error: 500 Internal error (request req-1)\n'
const SHUTDOWN = 'error: 503 The gateway is shutting down\n'

const deferred = <T>() => {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((yes, no) => {
    resolve = yes
    reject = no
  })
  return { promise, resolve, reject }
}

/** A provider's stream the test feeds; a read waits for the next item, and fails once the upstream call is aborted. */
function fakeUpstream(abort: AbortSignal) {
  const queue: (IteratorResult<Chunk> | Error)[] = []
  let wake: (() => void) | undefined
  let returned = false
  const push = (item: IteratorResult<Chunk> | Error) => {
    queue.push(item)
    wake?.()
  }
  abort.addEventListener('abort', () => wake?.())
  const iterator: AsyncIterator<Chunk> = {
    async next() {
      while (!queue.length) {
        if (abort.aborted) throw new Error('the upstream call was aborted')
        await new Promise<void>((resolve) => (wake = resolve))
      }
      const item = queue.shift()!
      if (item instanceof Error) throw item
      return item
    },
    async return() {
      returned = true
      return { done: true, value: undefined }
    },
  }
  return {
    iterator,
    send: (text: string) => push({ done: false, value: { text } }),
    report: (usage: UpstreamUsage) => push({ done: false, value: { usage } }),
    end: () => push({ done: true, value: undefined }),
    fail: (error: Error) => push(error),
    get returned() {
      return returned
    },
  }
}

/** What the test's billing gives a stream's end. */
type Billed = { completion_tokens: number }

/** A dialect writing plain lines; `throws`: the step at which it throws (as a dialect that meets what it cannot read). */
function lineDialect(throws?: 'opened' | 'forward' | 'finish'): StreamDialect<Chunk, Billed> {
  let failed = false
  return {
    opened(attempt) {
      if (throws === 'opened') throw new Error(`cannot serve ${attempt.entry.id}`)
    },
    account(chunk, tally) {
      if (chunk.usage) tally.reported = chunk.usage
      tally.generatedChars += chunk.text?.length ?? 0
    },
    forward(chunk) {
      if (throws === 'forward' && chunk.text === 'boom') throw new Error('unreadable chunk')
      return chunk.text === undefined ? undefined : Buffer.from(`data: ${chunk.text}\n`)
    },
    fail(error) {
      failed = true
      return Buffer.from(`error: ${error.status} ${error.message}\n`)
    },
    finish(usage) {
      if (throws === 'finish' && !failed) throw new Error('the response could not be stored')
      return Buffer.from(usage ? `usage: ${usage.completion_tokens}\n[DONE]\n` : '[DONE]\n')
    },
  }
}

interface Options {
  /** The provider had not opened as the response went out (a keep-alive goes out first). */
  waiting?: boolean
  /** The model may reason in hidden tokens. */
  readsOn?: boolean
  usageWaitMs?: number
  throws?: 'opened' | 'forward' | 'finish'
  /** The charge fails (the storage did not take it). */
  chargeFails?: boolean
  /** The charge waits for this before it answers. */
  chargeGate?: Promise<void>
}

let gateway: Gateway
let attempt: Attempt

/** One stream, its response gone out, with the provider's opening, its stream, its client and its settlements in the test's hands. */
function startStream(options: Options = {}) {
  const inFlight = createInFlight()
  const health: unknown[] = []
  const services = {
    now: Date.now,
    options: { keepAliveMs: 60_000, abortedStreamUsageWaitMs: options.usageWaitMs ?? 10_000 },
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    health: { record: (...args: unknown[]) => health.push(args) },
    inFlight,
    requestLog: { hold: () => () => {} },
  }
  const upstreamAbort = new AbortController()
  const client = new AbortController()
  const upstream = fakeUpstream(upstreamAbort.signal)
  const opening = deferred<OpenedStream<Chunk>>()
  opening.promise.catch(() => undefined)
  // An opening aborted (its client left, the shutdown) fails, as a provider's call does.
  upstreamAbort.signal.addEventListener('abort', () => opening.reject(new GatewayError(502, 'the upstream call was aborted')))
  const tally: StreamTally = { upstreamId: null, nativeFinishReason: null, generatedChars: 0 }
  const settlements: Settled[] = []
  const machine = createStreamMachine<OpenedStream<Chunk>, Billed>({
    charge: async (_served, status) => {
      settlements.push({ charged: status, usage: tally.reported ? 'reported' : 'estimated', chars: tally.generatedChars })
      await options.chargeGate
      if (options.chargeFails) throw new Error('the storage did not take the charge')
      return { completion_tokens: tally.reported?.completion_tokens ?? Math.ceil(tally.generatedChars / 4) }
    },
    release: async () => {
      settlements.push('released')
    },
  })
  machine.on('responded')
  const body = createStreamBody(
    services,
    {
      machine,
      opening: opening.promise,
      upstreamAbort,
      waiting: options.waiting ?? false,
      tally,
      client: client.signal,
      requestId: 'req-1',
      orgId: 'org-1',
      startedAt: Date.now(),
      readsOn: () => options.readsOn ?? false,
    },
    lineDialect(options.throws),
  )
  const reader = body.getReader()
  let received = ''
  return {
    machine,
    inFlight,
    upstream,
    upstreamAbort,
    settlements,
    health,
    /** The provider opens, its first chunk `text`. */
    open: (text: string) => opening.resolve({ attempt, tries: 1, iterator: upstream.iterator, first: { done: false, value: { text } }, firstAt: Date.now() }),
    failOpening: (error: Error) => opening.reject(error),
    /** Reads one piece of the stream. */
    async read() {
      const { value } = await reader.read()
      if (value) received += new TextDecoder().decode(value)
      return received
    },
    /** Reads the stream to its end. */
    async readAll() {
      for (let r = await reader.read(); !r.done; r = await reader.read()) received += new TextDecoder().decode(r.value)
      return received
    },
    /** The client goes away: its signal aborts and its side of the stream is cancelled. */
    async leave() {
      client.abort()
      await reader.cancel()
      return received
    },
    /** gateway.close() reaches its drain deadline at once. */
    close: () => inFlight.drain(0),
  }
}

type Stream = ReturnType<typeof startStream>

const endings: { name: string; options?: Options; drive: (s: Stream) => Promise<string>; received: string; settled: Settled; check?: (s: Stream) => void }[] = [
  {
    name: 'done, the provider reporting its usage',
    drive: async (s) => {
      s.open('Hel')
      await s.read()
      s.upstream.send('lo')
      s.upstream.report({ prompt_tokens: 3, completion_tokens: 2 })
      s.upstream.end()
      return s.readAll()
    },
    received: 'data: Hel\ndata: lo\nusage: 2\n[DONE]\n',
    settled: { charged: 'success', usage: 'reported', chars: 5 },
  },
  {
    name: 'done without a usage report (estimated)',
    drive: async (s) => {
      s.open('Hello')
      s.upstream.end()
      return s.readAll()
    },
    received: 'data: Hello\nusage: 2\n[DONE]\n',
    settled: { charged: 'success', usage: 'estimated', chars: 5 },
  },
  {
    name: 'client abort before the provider opened',
    options: { waiting: true },
    drive: async (s) => {
      await s.read()
      return s.leave()
    },
    received: KEEP_ALIVE,
    settled: 'released',
    check: (s) => expect(s.upstreamAbort.signal.aborted).toBe(true),
  },
  {
    name: 'client abort before the stream took a provider that opened meanwhile (billed for what it sent)',
    options: { waiting: true },
    drive: async (s) => {
      s.open('Hel')
      return s.leave()
    },
    received: '',
    settled: { charged: 'cancelled', usage: 'estimated', chars: 0 },
    check: (s) => expect([s.upstreamAbort.signal.aborted, s.upstream.returned]).toEqual([true, true]),
  },
  {
    name: 'client abort after content (stopped, billed for its text)',
    drive: async (s) => {
      s.open('Hel')
      await s.read()
      return s.leave()
    },
    received: 'data: Hel\n',
    settled: { charged: 'cancelled', usage: 'estimated', chars: 3 },
    check: (s) => expect([s.upstreamAbort.signal.aborted, s.upstream.returned]).toEqual([true, true]),
  },
  {
    name: 'client abort after content of a reasoning model (read on for its usage report)',
    options: { readsOn: true },
    drive: async (s) => {
      s.open('Hel')
      await s.read()
      const received = await s.leave()
      expect(s.upstreamAbort.signal.aborted).toBe(false) // still read
      s.upstream.send('lo')
      s.upstream.report({ prompt_tokens: 3, completion_tokens: 20_015 })
      return received
    },
    received: 'data: Hel\n',
    settled: { charged: 'cancelled', usage: 'reported', chars: 5 },
  },
  {
    name: 'client abort after content of a reasoning model, no report within abortedStreamUsageWaitMs',
    options: { readsOn: true, usageWaitMs: 30 },
    drive: async (s) => {
      s.open('Hel')
      await s.read()
      return s.leave()
    },
    received: 'data: Hel\n',
    settled: { charged: 'cancelled', usage: 'estimated', chars: 3 },
    check: (s) => expect([s.upstreamAbort.signal.aborted, s.upstream.returned]).toEqual([true, true]),
  },
  {
    name: 'upstream error before the provider opened, after the response went out',
    options: { waiting: true },
    drive: async (s) => {
      await s.read()
      s.failOpening(new GatewayError(502, 'Every provider failed'))
      return s.readAll()
    },
    received: `${KEEP_ALIVE}error: 502 Every provider failed\n[DONE]\n`,
    settled: 'released',
  },
  {
    name: 'upstream error after content',
    drive: async (s) => {
      s.open('Hel')
      await s.read()
      s.upstream.fail(new GatewayError(502, 'Up: the connection was reset'))
      return s.readAll()
    },
    received: 'data: Hel\nerror: 502 Up: the connection was reset\nusage: 1\n[DONE]\n',
    settled: { charged: 'error', usage: 'estimated', chars: 3 },
    check: (s) =>
      expect(s.health).toEqual([[{ provider: 'up', model: 'fake/m', credential: undefined }, 'org-1', { ok: false, latencyMs: expect.any(Number) }]]),
  },
  {
    name: 'deadline while waiting (the opening fails with 408)',
    options: { waiting: true },
    drive: async (s) => {
      await s.read()
      s.failOpening(new GatewayError(408, 'The request timed out'))
      return s.readAll()
    },
    received: `${KEEP_ALIVE}error: 408 The request timed out\n[DONE]\n`,
    settled: 'released',
  },
  {
    name: 'close() while waiting (the provider is stopped)',
    options: { waiting: true },
    drive: async (s) => {
      await s.read()
      await Promise.all([s.close(), s.readAll()])
      return s.readAll()
    },
    received: `${KEEP_ALIVE}${SHUTDOWN}[DONE]\n`,
    settled: 'released',
    check: (s) => expect(s.upstreamAbort.signal.aborted).toBe(true),
  },
  {
    name: 'close() while flowing (billed as cancelled)',
    drive: async (s) => {
      s.open('Hel')
      await s.read()
      await Promise.all([s.close(), s.readAll()])
      return s.readAll()
    },
    received: `data: Hel\n${SHUTDOWN}usage: 1\n[DONE]\n`,
    settled: { charged: 'cancelled', usage: 'estimated', chars: 3 },
    check: (s) => expect([s.upstreamAbort.signal.aborted, s.upstream.returned]).toEqual([true, true]),
  },
  {
    name: 'close() while a reasoning model is read on after its client left',
    options: { readsOn: true },
    drive: async (s) => {
      s.open('Hel')
      await s.read()
      const received = await s.leave()
      s.upstream.send('lo')
      await s.close()
      return received
    },
    received: 'data: Hel\n',
    settled: { charged: 'cancelled', usage: 'estimated', chars: 5 },
    check: (s) => expect(s.upstreamAbort.signal.aborted).toBe(true),
  },
  {
    name: 'exception thrown by the dialect mid-stream (billed as a failure)',
    options: { throws: 'forward' },
    drive: async (s) => {
      s.open('Hel')
      await s.read()
      s.upstream.send('boom')
      return s.readAll()
    },
    received: `data: Hel\n${INTERNAL}usage: 2\n[DONE]\n`,
    settled: { charged: 'error', usage: 'estimated', chars: 7 },
  },
  {
    name: 'exception thrown by the dialect as the stream takes its provider',
    options: { throws: 'opened' },
    drive: async (s) => {
      s.open('Hel')
      return s.readAll()
    },
    received: `${INTERNAL}usage: 0\n[DONE]\n`,
    settled: { charged: 'error', usage: 'estimated', chars: 0 },
    check: (s) => expect(s.upstream.returned).toBe(false),
  },
  {
    name: 'exception thrown by the billing at the end (told as a failure, not billed again)',
    options: { chargeFails: true },
    drive: async (s) => {
      s.open('Hel')
      s.upstream.end()
      return s.readAll()
    },
    received: `data: Hel\n${INTERNAL}`,
    settled: { charged: 'success', usage: 'estimated', chars: 3 },
  },
  {
    name: 'exception thrown by the dialect’s end once billed (told as a failure, not billed again)',
    options: { throws: 'finish' },
    drive: async (s) => {
      s.open('Hel')
      s.upstream.end()
      return s.readAll()
    },
    received: `data: Hel\n${INTERNAL}usage: 1\n[DONE]\n`,
    settled: { charged: 'success', usage: 'estimated', chars: 3 },
  },
]

describe('every end of a settled stream settles it once', () => {
  beforeAll(async () => {
    const model = { id: 'fake/m', upstreamId: 'm', pricing: { prompt: '0.000001', completion: '0.000002', currency: 'USD' } }
    gateway = createGateway({
      secret: 'x'.repeat(32),
      logger: false,
      providers: [openaiCompatible({ slug: 'up', name: 'Up', baseURL: 'http://127.0.0.1:9', apiKey: 'sk-up', models: [model] })],
    })
    await gateway.context.catalogue.ready()
    const entry = gateway.context.catalogue.require('fake/m')
    attempt = { entry, offer: entry.offers[0] }
  })
  afterAll(() => gateway?.close())

  for (const ending of endings) {
    it(ending.name, async () => {
      const s = startStream(ending.options)
      expect(await ending.drive(s)).toBe(ending.received)
      // In flight until it is closed and settled; then nothing of it is left.
      await expect.poll(() => s.machine.phase).toBe('settled')
      expect(s.inFlight.size).toBe(0)
      expect(s.settlements).toEqual([ending.settled])
      ending.check?.(s)
    })
  }

  it('a client that leaves while the end is billed: the one settlement is the end’s', async () => {
    const gate = deferred<void>()
    const s = startStream({ chargeGate: gate.promise })
    s.open('Hel')
    await s.read()
    s.upstream.end()
    const rest = s.read() // the provider ended: billing
    await expect.poll(() => s.settlements.length).toBe(1)
    await s.leave()
    gate.resolve()
    await rest
    await expect.poll(() => s.machine.phase).toBe('settled')
    expect(s.inFlight.size).toBe(0)
    expect(s.settlements).toEqual([{ charged: 'success', usage: 'estimated', chars: 3 }])
  })
})
