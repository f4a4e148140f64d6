import { describe, expect, it } from 'vitest'
import { healthFor } from '../../src/routing/plan'
import { plan } from '../../src/routing/planner'
import { createHealthTracker } from '../../src/routing/health'
import { meetsThresholds } from '../../src/routing/planner/thresholds'
import { readPreferences } from '../../src/routing/planner/preferences'
import { entryOf, healthOf, labels, offerOf, pct, planChat, providerOf, usd } from '../helpers/planner'

// The ranking and threshold stages of the planner (docs/routing.md): order, sort, partition, health then price,
// performance thresholds, on plain entries and a health table.

const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((slug) => providerOf(slug))
// acme/chat: b is cheapest, then a, then c; acme/alt: d, cheaper than all of them.
const chat = entryOf('acme/chat', [
  offerOf(a, { id: 'acme/chat', pricing: usd('0.000002') }),
  offerOf(b, { id: 'acme/chat', pricing: usd('0.000001') }),
  offerOf(c, { id: 'acme/chat', pricing: usd('0.000003') }),
])
const alt = entryOf('acme/alt', [offerOf(d, { id: 'acme/alt', pricing: usd('0.0000005') })])

describe('ranking', () => {
  it('orders by health, then by price (prompt + completion, then prompt) by default', () => {
    expect(labels(planChat([chat]))).toEqual(['b', 'a', 'c'])
    expect(labels(planChat([chat], {}, { health: { 'b acme/chat': { penalty: 1 } } }))).toEqual(['a', 'c', 'b'])
    expect(labels(planChat([chat], {}, { health: { 'a acme/chat': { penalty: 2 }, 'b acme/chat': { penalty: 1 } } }))).toEqual(['c', 'b', 'a'])
    // Same prompt + completion: the cheaper prompt first, whatever the catalogue's order.
    const tie = entryOf('acme/tie', [
      offerOf(a, { id: 'acme/tie', pricing: { prompt: '0.000003', completion: '0.000001', currency: 'USD' } }),
      offerOf(b, { id: 'acme/tie', pricing: { prompt: '0.000001', completion: '0.000003', currency: 'USD' } }),
    ])
    expect(labels(planChat([tie]))).toEqual(['b', 'a'])
    // The completion price counts: a cheap prompt with a dear completion goes after.
    const dearCompletion = entryOf('acme/sum', [
      offerOf(a, { id: 'acme/sum', pricing: { prompt: '0.000001', completion: '0.000009', currency: 'USD' } }),
      offerOf(b, { id: 'acme/sum', pricing: usd('0.000002') }),
    ])
    expect(labels(planChat([dearCompletion]))).toEqual(['b', 'a'])
  })

  it('puts provider.order first (case-insensitively), the rest after unless fallbacks are off', () => {
    expect(labels(planChat([chat], { provider: { order: ['C', 'a'] } }))).toEqual(['c', 'a', 'b'])
    const mixed = entryOf('acme/mixed', [offerOf(a, { id: 'acme/mixed' }), offerOf(providerOf('Zed'), { id: 'acme/mixed', pricing: usd('0.000009') })])
    expect(labels(planChat([mixed], { provider: { order: ['zed'] } }))).toEqual(['Zed', 'a'])
    expect(labels(planChat([chat], { provider: { order: ['c', 'a'], allow_fallbacks: false } }))).toEqual(['c', 'a'])
    // Without order, allow_fallbacks false keeps each model's first offer.
    expect(labels(planChat([chat, alt], { provider: { allow_fallbacks: false } }), true)).toEqual(['b acme/chat', 'd acme/alt'])
    // order goes before health.
    expect(labels(planChat([chat], { provider: { order: ['c'] } }, { health: { 'c acme/chat': { penalty: 2 } } }))).toEqual(['c', 'b', 'a'])
  })

  it('sort "price" ignores health; "latency" is fastest first and "throughput" highest first, unmeasured last', () => {
    const health = {
      'a acme/chat': { penalty: 2, latency: 10, throughput: 50 },
      'b acme/chat': { penalty: 1, latency: 300, throughput: 20 },
    }
    expect(labels(planChat([chat], { provider: { sort: 'price' } }, { health }))).toEqual(['b', 'a', 'c'])
    expect(labels(planChat([chat], { provider: { sort: 'latency' } }, { health }))).toEqual(['a', 'b', 'c'])
    expect(labels(planChat([chat], { provider: { sort: { by: 'throughput' } } }, { health }))).toEqual(['a', 'b', 'c'])
    const measured = { ...health, 'c acme/chat': { latency: 100, throughput: 90 } }
    expect(labels(planChat([chat], { provider: { sort: 'latency' } }, { health: measured }))).toEqual(['a', 'c', 'b'])
    expect(labels(planChat([chat], { provider: { sort: 'throughput' } }, { health: measured }))).toEqual(['c', 'a', 'b'])
    // Equal measurements fall back to price.
    const even = { 'a acme/chat': { latency: 50 }, 'b acme/chat': { latency: 50 }, 'c acme/chat': { latency: 50 } }
    expect(labels(planChat([chat], { provider: { sort: 'latency' } }, { health: even }))).toEqual(['b', 'a', 'c'])
  })

  it('sorts within each model by default, across every model with partition "none" (and a by)', () => {
    expect(labels(planChat([chat, alt], { provider: { sort: { by: 'price', partition: 'model' } } }), true)).toEqual([
      'b acme/chat',
      'a acme/chat',
      'c acme/chat',
      'd acme/alt',
    ])
    expect(labels(planChat([chat, alt], { provider: { sort: { by: 'price', partition: 'none' } } }), true)).toEqual([
      'd acme/alt',
      'b acme/chat',
      'a acme/chat',
      'c acme/chat',
    ])
    expect(labels(planChat([chat, alt], { provider: { sort: { partition: 'none' } } }), true)).toEqual([
      'b acme/chat',
      'a acme/chat',
      'c acme/chat',
      'd acme/alt',
    ])
  })

  it('reads the health of the requesting org: a breaker one org opened ranks last for it only', () => {
    const tracker = createHealthTracker({ windowSize: 4, failureThreshold: 2, cooldownMs: 1_000, maxEntries: 100, now: () => 0 })
    for (let i = 0; i < 2; i++) tracker.record({ provider: 'b', model: 'acme/chat' }, 'org-a', { ok: false, latencyMs: 5 })
    const planFor = (org: string) =>
      labels(plan({ request: { capability: 'chat', model: 'acme/chat' }, entries: [chat], catalogue: () => [chat], health: healthFor(tracker, org) }))
    expect(planFor('org-a')).toEqual(['a', 'c', 'b'])
    expect(planFor('org-b')).toEqual(['b', 'a', 'c'])
  })
})

describe('thresholds', () => {
  // b, the cheapest, is slow; c, the dearest, is fast; a is in between (p50 0.5 s, p90 4 s).
  const health = {
    'a acme/chat': { latencies: pct(500, 500, 4000, 4000), speeds: pct(10, 10, 10, 10) },
    'b acme/chat': { latencies: pct(2000, 2000, 2000, 2000), speeds: pct(20, 200, 200, 200) },
    'c acme/chat': { latencies: pct(100, 100, 100, 100) },
  }
  const planned = (provider: Record<string, unknown>) => labels(planChat([chat], { provider }, { health }))

  it('puts the offers that miss preferred_max_latency (seconds; a number is the p50) after those that meet it', () => {
    expect(planned({})).toEqual(['b', 'a', 'c'])
    expect(planned({ preferred_max_latency: 1 })).toEqual(['a', 'c', 'b'])
    expect(planned({ preferred_max_latency: 0.3 })).toEqual(['c', 'b', 'a'])
    expect(planned({ preferred_max_latency: { p90: 3 } })).toEqual(['b', 'c', 'a'])
    expect(planned({ preferred_max_latency: { p50: 1, p90: 3 } })).toEqual(['c', 'b', 'a'])
    // Deprioritised, never excluded: when every offer misses, the order is the ranking's.
    expect(planned({ preferred_max_latency: 0.05 })).toEqual(['b', 'a', 'c'])
  })

  it('puts the offers below preferred_min_throughput (tokens per second) after the others; one not measured yet meets it', () => {
    expect(planned({ preferred_min_throughput: 50 })).toEqual(['c', 'b', 'a'])
    expect(planned({ preferred_min_throughput: { p75: 100 } })).toEqual(['b', 'c', 'a'])
    expect(planned({ preferred_min_throughput: { p99: 5, p75: null } })).toEqual(['b', 'a', 'c'])
    // Both thresholds: an offer must meet each.
    expect(planned({ preferred_min_throughput: { p75: 100 }, preferred_max_latency: 1 })).toEqual(['c', 'b', 'a'])
  })

  it('checks every cutoff given against the percentiles, and nothing of an offer not measured', () => {
    const [offerA, offerB, offerC] = chat.offers.map((offer) => ({ entry: chat, offer }))
    const table = healthOf(health)
    const latency = readPreferences({ preferred_max_latency: { p50: 1, p99: 5 } })
    expect([offerA, offerB, offerC].map((x) => meetsThresholds(x, latency, table))).toEqual([true, false, true])
    const throughput = readPreferences({ preferred_min_throughput: { p75: 100 } })
    expect([offerA, offerB, offerC].map((x) => meetsThresholds(x, throughput, table))).toEqual([false, true, true])
  })

  it('puts a fallback model whose offer meets a threshold before the primary model’s that miss it', () => {
    const slow = entryOf('acme/slow', [offerOf(a, { id: 'acme/slow' })])
    const fast = entryOf('acme/fast', [offerOf(b, { id: 'acme/fast', pricing: usd('0.000009') })])
    const timings = { 'a acme/slow': { latencies: pct(5000, 5000, 5000, 5000) }, 'b acme/fast': { latencies: pct(200, 200, 200, 200) } }
    expect(labels(planChat([slow, fast], {}, { health: timings }), true)).toEqual(['a acme/slow', 'b acme/fast'])
    expect(labels(planChat([slow, fast], { provider: { preferred_max_latency: 2 } }, { health: timings }), true)).toEqual(['b acme/fast', 'a acme/slow'])
  })
})
