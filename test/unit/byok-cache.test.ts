import { describe, expect, it } from 'vitest'
import { createListedCache } from '../../src/stores/byok-cache'

describe('the cache of listed BYOK credentials', () => {
  const records = (n: number, size: number) => Array.from({ length: n }, (_, i) => ({ id: String(i), blob: 'x'.repeat(size) }))

  it('answers only for the version it was filled at', () => {
    const cache = createListedCache<{ id: string }>()
    cache.set('org', 'v1', [{ id: 'a' }])
    expect(cache.get('org', 'v1')).toEqual([{ id: 'a' }])
    expect(cache.get('org', 'v2')).toBeUndefined()
  })

  it('stays within its bytes, evicting the least recently used orgs, and never keeps a list larger than them', () => {
    const cache = createListedCache<{ id: string; blob: string }>({ maxEntries: 100, maxBytes: 10_000 })
    for (let org = 0; org < 50; org++) {
      cache.set(`org-${org}`, 'v', records(2, 1000))
      if (org > 0) cache.get('org-0', 'v') // keeps org-0 recently used
      expect(cache.size().bytes).toBeLessThanOrEqual(10_000)
    }
    expect(cache.get('org-0', 'v')).toHaveLength(2)
    expect(cache.get('org-1', 'v')).toBeUndefined()
    expect(cache.get('org-49', 'v')).toHaveLength(2)
    cache.set('huge', 'v', records(20, 1000))
    expect(cache.get('huge', 'v')).toBeUndefined()
    expect(cache.size().bytes).toBeLessThanOrEqual(10_000)
  })

  it('stays within its entries', () => {
    const cache = createListedCache<{ id: string }>({ maxEntries: 3, maxBytes: 1 << 20 })
    for (let org = 0; org < 10; org++) cache.set(`org-${org}`, 'v', [{ id: 'a' }])
    expect(cache.size().entries).toBe(3)
    expect(cache.get('org-9', 'v')).toEqual([{ id: 'a' }])
    expect(cache.get('org-0', 'v')).toBeUndefined()
  })
})
