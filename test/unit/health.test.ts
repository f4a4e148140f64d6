import { describe, expect, it } from 'vitest'
import { createHealthTracker } from '../../src/routing/health'

const fail = { ok: false, latencyMs: 5 }
const ok = { ok: true, latencyMs: 5 }

describe('the health tracker', () => {
  const tracker = (now: { t: number }, maxEntries = 100) =>
    createHealthTracker({ windowSize: 4, failureThreshold: 2, cooldownMs: 1_000, maxEntries, now: () => now.t })
  const key = { provider: 'p', model: 'm' }

  it('frees the place of a probe that never ended after one cool-down', () => {
    const now = { t: 0 }
    const health = tracker(now)
    health.record(key, 'org-a', fail)
    health.record(key, 'org-b', fail)
    expect(health.admit(key, 'org-c')).toBeNull()
    now.t = 1_000
    expect(health.admit(key, 'org-c')).toEqual({ probe: true })
    expect(health.admit(key, 'org-d')).toBeNull()
    expect(health.penalty(key, 'org-d')).toBe(2)
    now.t = 1_999
    expect(health.admit(key, 'org-d')).toBeNull()
    now.t = 2_000
    expect(health.admit(key, 'org-d')).toEqual({ probe: true })
  })

  it('keeps a breaker opened by one org to that org, and opens it for everyone on a second org’s failure', () => {
    const now = { t: 0 }
    const health = tracker(now)
    health.record(key, 'org-a', fail)
    health.record(key, 'org-a', fail)
    expect([health.state(key, 'org-a'), health.state(key, 'org-b')]).toEqual(['open', 'closed'])
    expect(health.retryAt(key, 'org-b')).toBeNull()
    health.record(key, 'org-b', fail)
    expect([health.state(key, 'org-a'), health.state(key, 'org-b')]).toEqual(['open', 'open'])
    expect(health.snapshot()[0]).toMatchObject({ open_for: 'everyone', consecutive_failures: 3, requests: 3 })
    health.record(key, 'org-b', ok)
    expect(health.snapshot()[0]).toMatchObject({ state: 'closed', open_for: null, consecutive_failures: 0 })
  })

  it('keeps each window and the number of entries bounded, forgetting the least recently used', () => {
    const health = tracker({ t: 0 }, 3)
    for (let i = 0; i < 10; i++) health.record(key, 'org', ok)
    expect(health.snapshot()[0].requests).toBe(4)
    health.record({ ...key, credential: 'c1' }, 'org', ok)
    health.record({ ...key, credential: 'c2' }, 'org', ok)
    health.record(key, 'org', ok) // used again: now the most recent
    health.record({ ...key, credential: 'c3' }, 'org', ok)
    expect(health.snapshot().map((s) => s.credential)).toEqual(['c2', 'service', 'c3'])
  })

  it('releases only a probe: a release of an ordinary admission changes nothing', () => {
    const now = { t: 0 }
    const health = tracker(now)
    health.record(key, 'a', fail)
    health.record(key, 'b', fail)
    now.t = 1_000
    const probe = health.admit(key, 'a')!
    health.release(key, { probe: false })
    expect(health.admit(key, 'b')).toBeNull()
    health.release(key, probe)
    expect(health.admit(key, 'b')).toEqual({ probe: true })
  })
})

describe('the router’s options', () => {
  it('are checked when the gateway is created, naming the bad one', async () => {
    const { createGateway } = await import('../../src/index')
    const make = (options: Parameters<typeof createGateway>[0]) => () => createGateway({ secret: 'x'.repeat(32), logger: false, ...options })
    expect(make({ retry: { maxRetries: -1 } })).toThrow(/`retry.maxRetries` must be a whole number of at least 0, got -1/)
    expect(make({ retry: { maxRetries: 11 } })).toThrow(/`retry.maxRetries` must be at most 10/)
    expect(make({ retry: { baseDelayMs: 1.5 } })).toThrow(/`retry.baseDelayMs`/)
    expect(make({ health: { failureThreshold: 0 } })).toThrow(/`health.failureThreshold` must be a whole number of at least 1/)
    expect(make({ drainTimeoutMs: -5 })).toThrow(/`drainTimeoutMs` must be a positive number/)
    const gateway = createGateway({ secret: 'x'.repeat(32), logger: false })
    expect([gateway.context.options.retry, gateway.context.options.health, gateway.context.options.drainTimeoutMs]).toEqual([
      { maxRetries: 2, baseDelayMs: 250, maxDelayMs: 10_000 },
      { failureThreshold: 3, cooldownMs: 30_000, windowSize: 20, maxEntries: 10_000 },
      30_000,
    ])
    await gateway.close()
  })
})
