// The benchmark's load generator: node:http, one keep-alive Agent per target with maxSockets = the connections.
import { Agent, type OutgoingHttpHeaders, request } from 'node:http'

export type TargetName = 'direct' | 'proxy' | 'h3' | 'gateway' | 'gateway-redis' | 'portkey'
export interface Target {
  name: TargetName
  agent: Agent
  host: string
  port: number
  path: string
  model: string
  authorization?: string
  /** Other headers every request carries (Portkey's provider and custom host). */
  headers?: Record<string, string>
}
export interface Sample {
  /** Response complete, ms. */
  total: number
  /** First body byte, ms. */
  ttfb: number
}

// BENCH_REQUEST_TIMEOUT_MS: read at each request (bench/instructions.ts sets it after this module is loaded).
const requestTimeoutMs = () => Number(process.env.BENCH_REQUEST_TIMEOUT_MS) || 30_000

export function targetOf(
  name: TargetName,
  base: string,
  path: string,
  model: string,
  connections: number,
  authorization?: string,
  headers?: Record<string, string>,
): Target {
  const url = new URL(base)
  return {
    name,
    agent: new Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections }),
    host: url.hostname,
    port: Number(url.port),
    path: url.pathname.replace(/\/+$/, '') + path,
    model,
    authorization,
    headers,
  }
}

export interface Prepared {
  body: Buffer
  headers: OutgoingHttpHeaders
}
// BENCH_PROMPT_KB: a system message of that many KB of code-like text before the user's (a coding agent's request is
// tens of KB), so that what the gateway does per byte of a request shows; the answer stays the same few words.
const PROMPT_KB = Math.max(0, Number(process.env.BENCH_PROMPT_KB) || 0)
const CODE_LINE = 'const answer = await client.chat({ model: "x", messages }); // "quoted" \\ and a tab\t\n'
const longPrompt = PROMPT_KB > 0 ? [{ role: 'system', content: CODE_LINE.repeat(Math.ceil((PROMPT_KB * 1024) / CODE_LINE.length)) }] : []

// Streamed requests ask for usage in every case: the gateway always asks its upstream for it, so the fake does the same work.
export function prepare(target: Target, stream: boolean, model = target.model): Prepared {
  const body = Buffer.from(
    JSON.stringify({
      model,
      messages: [...longPrompt, { role: 'user', content: 'hello benchmark' }],
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    }),
  )
  const headers: OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': body.length }
  if (target.authorization) headers.authorization = target.authorization
  if (target.headers) Object.assign(headers, target.headers)
  return { body, headers }
}

export class BadResponse extends Error {}
type Check = (status: number, text: string) => void

export function send(target: Target, prepared: Prepared, stream: boolean, check: Check): Promise<Sample> {
  return new Promise((resolvePromise, reject) => {
    const started = performance.now()
    let ttfb = 0
    const req = request({ agent: target.agent, host: target.host, port: target.port, method: 'POST', path: target.path, headers: prepared.headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => {
        if (!ttfb) ttfb = performance.now() - started
        chunks.push(chunk)
      })
      res.on('error', reject)
      res.on('end', () => {
        const total = performance.now() - started
        try {
          check(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'))
        } catch (error) {
          return reject(error)
        }
        resolvePromise({ total, ttfb: ttfb || total })
      })
    })
    req.setTimeout(requestTimeoutMs(), () => req.destroy(new Error(`${target.name} ${stream ? 'stream' : 'whole'}: no answer within ${requestTimeoutMs()} ms`)))
    req.on('error', reject)
    req.end(prepared.body)
  })
}

// Cheap checks on every response (the same work for every target), a full parse of the first one of each scenario.
export function quickCheck(target: Target, stream: boolean): Check {
  return (status, text) => {
    if (status !== 200) throw new BadResponse(`${target.name} ${stream ? 'stream' : 'whole'}: HTTP ${status}: ${text.slice(0, 300)}`)
    if (stream ? !text.endsWith('data: [DONE]\n\n') : !text.includes('"choices"')) {
      throw new BadResponse(`${target.name} ${stream ? 'stream' : 'whole'}: unexpected body: ${text.slice(0, 300)}`)
    }
  }
}
export function fullCheck(target: Target, stream: boolean): Check {
  const quick = quickCheck(target, stream)
  return (status, text) => {
    quick(status, text)
    const objects = stream
      ? text
          .split('\n\n')
          .filter((e) => e.startsWith('data: ') && e !== 'data: [DONE]')
          .map((e) => JSON.parse(e.slice(6)))
      : [JSON.parse(text)]
    const content = stream ? objects.map((o) => o.choices?.[0]?.delta?.content ?? '').join('') : objects[0].choices[0].message.content
    if (!/^Hello from bench: hello benchmark$/.test(content)) throw new BadResponse(`${target.name}: unexpected content ${JSON.stringify(content)}`)
    const usage = objects.findLast((o) => o.usage)?.usage
    if (!usage?.total_tokens) throw new BadResponse(`${target.name}: no usage in the answer`)
    // Billing on: a gateway's usage carries the cost it charged.
    if (target.name.startsWith('gateway') && !(Number(usage.cost) > 0)) throw new BadResponse(`${target.name}: usage without a cost: ${JSON.stringify(usage)}`)
  }
}

/**
 * Sends `count` requests over `loops` concurrent loops (or, with `untilMs`, as many as fit until then); returns the
 * samples and the wall time. With `spreadMs`, loop i starts i × spreadMs / loops later: against an upstream that
 * always takes the same time, loops that start together stay in step for the whole run and hit the gateway in waves
 * of 32 at once, which no set of independent clients does; spread over one upstream latency, they arrive at a steady
 * rate. `streamOf(loop)` picks each loop's kind (the memory phase mixes them).
 */
export async function load(
  target: Target,
  streamOf: (loop: number) => boolean,
  options: { count?: number; untilMs?: number; loops: number; spreadMs?: number; gapMs?: number; progress?: { done: number }; keepSamples?: boolean },
): Promise<{ samples: Sample[]; elapsedMs: number }> {
  const { count = Number.POSITIVE_INFINITY, untilMs, spreadMs = 0, gapMs = 0, progress, keepSamples = true } = options
  const samples: Sample[] = []
  let issued = 0
  const loops = Math.min(options.loops, count)
  const loop = async (index: number) => {
    const stream = streamOf(index)
    const prepared = prepare(target, stream)
    const quick = quickCheck(target, stream)
    if (spreadMs) await new Promise((resolve) => setTimeout(resolve, (index * spreadMs) / loops))
    while (issued < count && (untilMs === undefined || performance.now() < untilMs)) {
      issued++
      const sample = await send(target, prepared, stream, quick)
      if (keepSamples) samples.push(sample)
      if (progress) progress.done++
      if (gapMs) await new Promise((resolve) => setTimeout(resolve, gapMs))
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: loops }, (_, index) => loop(index)))
  return { samples, elapsedMs: performance.now() - started }
}

export const round3 = (x: number) => Math.round(x * 1000) / 1000
function percentile(sorted: Float64Array, p: number): number {
  if (!sorted.length) return Number.NaN
  const rank = Math.ceil((p / 100) * sorted.length) - 1 // nearest rank
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]
}
export function summary(values: number[]) {
  const sorted = Float64Array.from(values).sort()
  const mean = values.reduce((a, b) => a + b, 0) / values.length
  return {
    p50: round3(percentile(sorted, 50)),
    p90: round3(percentile(sorted, 90)),
    p99: round3(percentile(sorted, 99)),
    mean: round3(mean),
    max: round3(sorted[sorted.length - 1]),
  }
}
