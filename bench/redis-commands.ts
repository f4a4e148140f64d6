// Counts the Redis commands and round trips of each gateway request, in the gateway child (bench/gateway-process.ts
// with BENCH_STORAGE=redis). Wraps the ioredis client's `sendCommand`, through which every command goes (single
// commands, and each command of a pipeline or MULTI/EXEC, written together when the pipeline is executed), so it
// sees exactly what the gateway sends on its own connection and nothing of other clients of the same server (which
// MONITOR would mix in, from a second connection, at a cost to the server).
//
// Attribution needs requests one at a time: bench/chat.ts turns counting on, sends requests on one connection with a
// pause after each answer (so that writes made after the response still land before the next request), and turns it
// off. A request starts at the server's 'request' event; its upstream call at node:diagnostics_channel
// 'http.client.request.start'; commands before that are "before", after it "after".
//
// A round trip is a wait on Redis: a command sent while none of this gateway's commands is in flight starts one;
// commands sent while another is in flight (a pipeline, a MULTI/EXEC, commands awaited together) share it.
//
// The authentication cache's epoch poll (a GET of `<prefix>:auth-epoch` every second, off the request path:
// docs/keys.md#the-authentication-cache) belongs to no request: it is counted apart (`background`), and a request's
// command sent while it is in flight still starts a round trip of its own.
import { subscribe } from 'node:diagnostics_channel'
import type { Server } from 'node:http'

interface Part {
  round_trips: number
  commands: number
  by_command: Record<string, number>
}
interface Counted {
  before: { round_trips: number; commands: number }
  after: { round_trips: number; commands: number }
  /** The commands in order, `|` between round trips, ` // ` where the upstream call starts. */
  sequence: string[]
  upstreamStarted: boolean
}
export interface RedisCounts {
  requests: number
  before: Part
  after: Part
  /** Commands while counting but outside any request (none expected). */
  outside: Part
  /** The gateway's own background reads (the authentication cache's epoch poll), whenever they fell. */
  background: Part
  per_request: { before: { min: number; max: number }; after: { min: number; max: number } }
  /** The distinct command sequences and how many requests had each, most frequent first (at most 5). */
  sequences: { requests: number; sequence: string }[]
}

const part = (): Part => ({ round_trips: 0, commands: 0, by_command: {} })

interface RedisLike {
  sendCommand(command: { name: string; args?: unknown[]; promise: Promise<unknown> }, ...rest: unknown[]): unknown
}

const BACKGROUND = /:auth-epoch$/

/** Installs the counter; returns start() (resets and counts) and stop() (stops and returns the counts). */
export function countRedisCommands(client: RedisLike, server: Server) {
  let counting = false
  let inFlight = 0
  let counts: RedisCounts
  let finished: Counted[] = []
  let current: Counted | undefined

  const close = () => {
    if (current) finished.push(current)
    current = undefined
  }
  server.prependListener('request', () => {
    if (!counting) return
    close()
    counts.requests++
    current = { before: { round_trips: 0, commands: 0 }, after: { round_trips: 0, commands: 0 }, sequence: [], upstreamStarted: false }
  })
  subscribe('http.client.request.start', () => {
    if (counting && current && !current.upstreamStarted) {
      current.upstreamStarted = true
      current.sequence.push('//')
    }
  })

  const original = client.sendCommand
  client.sendCommand = function sendCommand(this: RedisLike, command, ...rest) {
    if (counting && BACKGROUND.test(String(command.args?.[0] ?? ''))) {
      counts.background.round_trips++
      counts.background.commands++
      counts.background.by_command[command.name] = (counts.background.by_command[command.name] ?? 0) + 1
    } else if (counting) {
      const where = current ? (current.upstreamStarted ? 'after' : 'before') : 'outside'
      const bucket = counts[where]
      const newTrip = inFlight === 0
      if (newTrip) bucket.round_trips++
      bucket.commands++
      bucket.by_command[command.name] = (bucket.by_command[command.name] ?? 0) + 1
      if (current) {
        current[where as 'before' | 'after'].commands++
        if (newTrip) current[where as 'before' | 'after'].round_trips++
        if (newTrip && current.sequence.length && current.sequence[current.sequence.length - 1] !== '//') current.sequence.push('|')
        current.sequence.push(command.name)
      }
      inFlight++
      const done = () => {
        inFlight--
      }
      command.promise.then(done, done)
    }
    return original.call(this, command, ...rest)
  }

  return {
    start() {
      counts = {
        requests: 0,
        before: part(),
        after: part(),
        outside: part(),
        background: part(),
        per_request: { before: { min: 0, max: 0 }, after: { min: 0, max: 0 } },
        sequences: [],
      }
      finished = []
      current = undefined
      counting = true
    },
    stop(): RedisCounts {
      counting = false
      close()
      const trips = (w: 'before' | 'after') => finished.map((c) => c[w].round_trips)
      for (const w of ['before', 'after'] as const) {
        const t = trips(w)
        counts.per_request[w] = { min: t.length ? Math.min(...t) : 0, max: t.length ? Math.max(...t) : 0 }
      }
      const seen = new Map<string, number>()
      for (const c of finished) {
        const s = c.sequence.join(' ').replace(/ \| /g, ' | ')
        seen.set(s, (seen.get(s) ?? 0) + 1)
      }
      counts.sequences = [...seen]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([sequence, requests]) => ({ requests, sequence }))
      return counts
    },
  }
}
