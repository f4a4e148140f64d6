import { createStorage } from 'unstorage'
import { describe, expect, it } from 'vitest'
import { boundAppended, createRecords, listOwnKeys, ownedStorage } from '../../src/stores/records'

// The gateway's own memory storage is read and written straight in its Map when unstorage would not rewrite the key
// (src/stores/records.ts): whatever the key, what one path writes the other reads, under the key unstorage lists.
describe('records in the gateway’s own memory storage', () => {
  const keys = [
    'usage:org_1:gen-1',
    'rollups:org_1:2026-11-28:openai/gpt-4o', // a model slug's slash: unstorage writes it as a colon
    'a\\b',
    'q:with?query',
    ':leading',
    'trailing:',
    'double::colon',
    'plain',
  ]

  it('agree with unstorage on every kind of key, both ways', async () => {
    const storage = ownedStorage(createStorage())
    const records = createRecords(storage)
    for (const [i, key] of keys.entries()) {
      await records.set(key, { n: i })
      expect(await storage.getItem(key)).toEqual({ n: i })
      await storage.setItem(`${key}x`, { m: i })
      expect(await records.get(`${key}x`)).toEqual({ m: i })
    }
    // Each key once, as unstorage names it.
    const listed = await storage.getKeys()
    expect(listed).toContain('rollups:org_1:2026-11-28:openai:gpt-4o')
    expect(listed).toContain('a:b')
    expect(listed).toContain('leading')
    expect(listed).toContain('double:colon')
    expect(listed.filter((k) => k.includes('/') || k.includes('\\') || k.includes('::'))).toEqual([])
  })

  it('bounds appended records per prefix and parses only the evictions it is asked to tell', async () => {
    const storage = ownedStorage(createStorage())
    const told: [string, unknown][] = []
    boundAppended(storage, { prefixes: ['usage:', 'responses:'], max: 2, evicted: { prefix: 'responses:', tell: (k, v) => told.push([k, v]) } })
    const records = createRecords(storage)
    for (let i = 1; i <= 4; i++) {
      records.setNow(`usage:${i}`, { i })
      records.setNow(`responses:org:${i}`, { i })
    }
    expect((await storage.getKeys('usage')).sort()).toEqual(['usage:3', 'usage:4'])
    expect((await storage.getKeys('responses')).sort()).toEqual(['responses:org:3', 'responses:org:4'])
    expect(told).toEqual([
      ['responses:org:1', { i: 1 }],
      ['responses:org:2', { i: 2 }],
    ])
  })

  it('lists a prefix straight from the Map as unstorage lists it, and leaves other storages and bases to unstorage', async () => {
    const storage = ownedStorage(createStorage())
    const records = createRecords(storage)
    for (const key of keys) await records.set(key, { key })
    await storage.setItem('usage:org_2:gen-2', { n: 2 })
    await storage.setItem('usage-other:x', { n: 3 }) // a longer prefix, not below `usage:`
    await storage.setMeta('usage:org_1:gen-1', { note: 'meta' }) // its meta key ends in `$`: listed by neither
    for (const base of ['usage:', 'rollups:', 'rollups:org_1:', 'q:', 'double:', 'nothing:']) {
      const own = listOwnKeys(storage, base)
      expect(own, base).toEqual(await storage.getKeys(base))
    }
    expect(listOwnKeys(storage, 'usage:')).toEqual(['usage:org_1:gen-1', 'usage:org_2:gen-2'])
    expect(listOwnKeys(storage, 'rollups:')).toEqual(['rollups:org_1:2026-11-28:openai:gpt-4o'])
    // A base unstorage would rewrite, or one without its colon, and any storage the gateway did not create: unstorage lists.
    expect(listOwnKeys(storage, 'rollups:org_1:2026-11-28:openai/gpt-4o:')).toBeUndefined()
    expect(listOwnKeys(storage, 'usage')).toBeUndefined()
    expect(listOwnKeys(createStorage(), 'usage:')).toBeUndefined()
  })
})
