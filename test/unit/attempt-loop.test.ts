import { describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/logger'
import { upstreamError } from '../../src/providers/upstream-error'
import { type AttemptServices, firstSuccessful } from '../../src/routing/attempts'
import { createHealthTracker } from '../../src/routing/health'
import type { Attempt } from '../../src/routing/plan'
import { credentialOf, entryOf, offerOf, providerOf } from '../helpers/planner'

// The attempt loop (docs/routing.md) over the few services it takes, without a gateway: a provider failure falls
// back to the next attempt, which is called with the customer's own key.

describe('the attempt loop', () => {
  it('falls back from a failing provider to the next attempt, reporting to hooks, health and metrics', async () => {
    const events: string[] = []
    const touched: string[] = []
    const health = createHealthTracker({ windowSize: 4, failureThreshold: 3, cooldownMs: 1_000, maxEntries: 100, now: () => 0 })
    const services: AttemptServices = {
      options: {
        requestTimeoutMs: 5_000,
        upstreamTimeoutMs: 1_000,
        retry: { maxRetries: 0, baseDelayMs: 0, maxDelayMs: 0 },
        hooks: {
          onAttempt: (e) => events.push(`attempt ${e.attempt} ${e.provider}`),
          onFallback: (e) => events.push(`fallback ${e.provider} → ${e.next.provider}`),
          onSuccess: (e) => events.push(`success ${e.provider}`),
        },
      },
      health,
      byok: {
        secretOf: async (record) => `secret-of-${record.id}`,
        touch: async (record) => {
          touched.push(record.id)
        },
      },
      now: () => 0,
      logger: silentLogger,
      requestLog: { traceOf: () => undefined },
      metrics: { upstreamError: (provider, type) => events.push(`metric ${provider} ${type}`) },
    }
    const entry = entryOf('acme/chat', [offerOf(providerOf('a'), { id: 'acme/chat' }), offerOf(providerOf('b', { byokSupported: true }), { id: 'acme/chat' })])
    const attempts: Attempt[] = [
      { entry, offer: entry.offers[0] },
      { entry, offer: entry.offers[1], credential: credentialOf('k1', 'b') },
    ]
    const keys: (string | undefined)[] = []
    const served = await firstSuccessful(services, attempts, { signal: new AbortController().signal, requestId: 'r1', org: 'o1' }, async (attempt, options) => {
      keys.push(options.apiKey)
      if (attempt.offer.provider.slug === 'a') throw upstreamError({ slug: 'a', name: 'A' }, 'upstream_error', 'boom')
      return 'answer'
    })
    expect([served.result, served.attempt.credential?.id, served.tries]).toEqual(['answer', 'k1', 2])
    expect(keys).toEqual([undefined, 'secret-of-k1'])
    expect(events).toEqual(['attempt 1 a', 'metric a upstream_error', 'fallback a → b:byok:k1', 'attempt 2 b:byok:k1', 'success b:byok:k1'])
    expect(touched).toEqual(['k1'])
    expect(health.snapshot().map((h) => [h.provider, h.credential, h.failures, h.requests])).toEqual([
      ['a', 'service', 1, 1],
      ['b', 'k1', 0, 1],
    ])
  })
})
