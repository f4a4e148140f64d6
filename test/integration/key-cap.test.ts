/**
 * How many keys an org may have (issue 28, item 10; docs/keys.md#how-many-keys-an-org-may-have): live keys are capped
 * per org (`keys.maxPerOrg`) on every way a key is made (POST /keys, minting, admin.issueKey), exactly, even with two
 * instances issuing at once over Redis or PostgreSQL; deleting or revoking makes room. GET /keys pages from an index
 * and reads only its page's records.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { Storage } from 'unstorage'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway } from '../../src/index'
import { demo } from '../../src/providers/demo'
import { createCustomer, startGateway, TEST_SECRET, type TestGateway } from '../helpers/server'
import { memoryKind, postgresKind, redisKind, type StorageKind } from '../helpers/storages'

const json = { 'content-type': 'application/json' }
const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** What every client of the gateway does: create a code with a key, or exchange one. */
function clientOf(t: TestGateway) {
  return {
    code: async (key: string) => {
      const verifier = randomBytes(32).toString('base64url')
      const res = await t.request('/api/v1/auth/keys/code', {
        method: 'POST',
        headers: { ...json, ...bearer(key) },
        body: JSON.stringify({ callback_url: 'https://app.example/cb', code_challenge: createHash('sha256').update(verifier).digest('base64url') }),
      })
      return { res, made: res.status === 200 ? { code: (await res.json()).code as string, verifier } : undefined }
    },
    exchange: (made: { code: string; verifier: string }) =>
      t.request('/api/v1/auth/keys', { method: 'POST', headers: json, body: JSON.stringify({ code: made.code, code_verifier: made.verifier }) }),
    manage: (manager: string, method: string, path: string, body?: unknown) =>
      t.request(`/api/v1${path}`, { method, headers: { ...bearer(manager), ...json }, body: body === undefined ? undefined : JSON.stringify(body) }),
  }
}

/** Asserts the cap's refusal: 403 in the envelope, naming the limit and how to make room. */
async function expectCapRefusal(res: Response, max: number) {
  expect(res.status).toBe(403)
  const { error } = await res.json()
  expect(error).toMatchObject({ code: 403, type: 'forbidden', metadata: { max_keys: max } })
  expect(error.message).toBe(
    `This organisation already has ${max} live API keys, the most it may have (keys.maxPerOrg): delete keys it no longer needs (DELETE /api/v1/keys/{hash}) or revoke them to make room`,
  )
}

describe('the cap on live keys per org (keys.maxPerOrg)', () => {
  let t: TestGateway
  beforeAll(async () => {
    t = await startGateway({ providers: [demo()], keys: { maxPerOrg: 5 } })
  })
  afterAll(async () => {
    await t?.close()
  })

  it('refuses one key too many on POST /keys, minting and admin.issueKey (403, naming the limit); deleting or revoking makes room', async () => {
    const client = clientOf(t)
    const owner = await createCustomer(t.gateway, { credits: '1' }) // 1 live key
    const manager = (await t.gateway.admin.issueKey({ userId: owner.user.id, label: 'manager', management: true })).key // 2
    const early = await client.code(owner.key) // made while there is room
    const created: string[] = []
    for (let i = 0; i < 3; i++) {
      const res = await client.manage(manager, 'POST', '/keys', { name: `key ${i}` })
      expect(res.status).toBe(201)
      created.push((await res.json()).data.hash)
    }
    // 5 live keys: every way of making a sixth is refused, and makes nothing.
    await expectCapRefusal(await client.manage(manager, 'POST', '/keys', { name: 'one too many' }), 5)
    await expectCapRefusal((await client.code(owner.key)).res, 5)
    await expectCapRefusal(await client.exchange(early.made!), 5)
    await expect(t.gateway.admin.issueKey({ userId: owner.user.id })).rejects.toMatchObject({ status: 403, metadata: { max_keys: 5 } })
    await expect(t.gateway.admin.issueKey({ userId: owner.user.id, management: true })).rejects.toMatchObject({ status: 403 })
    expect(await t.gateway.admin.listKeys(owner.user.id)).toHaveLength(5)
    // Another org is not concerned.
    expect((await createCustomer(t.gateway)).key).toMatch(/^sk-service-v1-/)

    // A disabled key still counts (it can be enabled again).
    expect((await client.manage(manager, 'PATCH', `/keys/${created[0]}`, { disabled: true })).status).toBe(200)
    await expectCapRefusal(await client.manage(manager, 'POST', '/keys', { name: 'still too many' }), 5)
    // Deleting one makes room for one; deleting it again makes none.
    expect((await client.manage(manager, 'DELETE', `/keys/${created[0]}`)).status).toBe(200)
    expect((await client.manage(manager, 'DELETE', `/keys/${created[0]}`)).status).toBe(404)
    expect((await client.manage(manager, 'POST', '/keys', { name: 'room made' })).status).toBe(201)
    await expectCapRefusal(await client.manage(manager, 'POST', '/keys', { name: 'full again' }), 5)
    // So does revoking one (twice: once); the room is taken by a minted key.
    await t.gateway.admin.revokeKey(created[1])
    await t.gateway.admin.revokeKey(created[1])
    const code = await client.code(owner.key)
    const minted = await client.exchange(code.made!)
    expect(minted.status).toBe(200)
    await expectCapRefusal((await client.code(owner.key)).res, 5)

    // Deleting a key deletes the room of the keys it minted too (they are revoked with it): two rooms.
    expect((await client.manage(manager, 'DELETE', `/keys/${owner.record.hash}`)).status).toBe(200)
    expect((await t.request('/api/v1/me', { headers: bearer((await minted.json()).key) })).status).toBe(401)
    expect((await client.manage(manager, 'POST', '/keys', { name: 'one' })).status).toBe(201)
    expect((await client.manage(manager, 'POST', '/keys', { name: 'two' })).status).toBe(201)
    await expectCapRefusal(await client.manage(manager, 'POST', '/keys', { name: 'three' }), 5)
    expect(await t.gateway.context.accounts.liveKeyCount(owner.user.org_id)).toBe(5)
  })

  it('counts an org’s keys issued before the cap existed from their records', async () => {
    const owner = await createCustomer(t.gateway, { credits: '1' })
    for (let i = 0; i < 3; i++) await t.gateway.admin.issueKey({ userId: owner.user.id })
    await t.gateway.admin.revokeKey((await t.gateway.admin.issueKey({ userId: owner.user.id })).key)
    // As if the org's keys predated the cap: no count yet. Its records show 4 live keys (and one revoked).
    await t.gateway.internals.storage.removeItem(t.gateway.internals.kv.key('key-count', owner.user.org_id))
    await t.gateway.admin.issueKey({ userId: owner.user.id })
    await expect(t.gateway.admin.issueKey({ userId: owner.user.id })).rejects.toMatchObject({ status: 403 }) // 5 live
    await t.gateway.admin.revokeKey(owner.key)
    expect((await t.gateway.admin.issueKey({ userId: owner.user.id })).key).toMatch(/^sk-service-v1-/)
    expect(await t.gateway.context.accounts.liveKeyCount(owner.user.org_id)).toBe(5)
  })

  it('createGateway refuses a keys.maxPerOrg that is not a whole number of at least 1', () => {
    for (const maxPerOrg of [0, -1, 1.5, Number.NaN, '10' as unknown as number]) {
      expect(() => createGateway({ secret: TEST_SECRET, logger: false, keys: { maxPerOrg } }), String(maxPerOrg)).toThrow(
        'model-gateway: `keys.maxPerOrg` must be a whole number of at least 1',
      )
    }
  })
})

/** A storage that counts the reads of key records. */
function countingKeyReads(storage: Storage): { storage: Storage; reads: () => number } {
  let reads = 0
  const getItem = storage.getItem.bind(storage)
  storage.getItem = ((key: string, ...rest: never[]) => {
    if (/^gateway:keys:/.test(key)) reads++
    return getItem(key, ...rest)
  }) as Storage['getItem']
  return { storage, reads: () => reads }
}

describe('GET /keys pages from an index of the org’s keys', () => {
  const kind = memoryKind()
  let clock = Date.parse('2026-11-26T12:00:00.000Z')
  let t: TestGateway
  let reads: () => number
  beforeAll(async () => {
    const counted = countingKeyReads(kind.open())
    reads = counted.reads
    t = await startGateway({ storage: counted.storage, clock: () => clock, providers: [demo()] })
  })
  afterAll(async () => {
    await t?.close()
    await kind.cleanup()
  })

  it('reads only the records of its page, in the order and with the filter of the whole list', async () => {
    const client = clientOf(t)
    const owner = await createCustomer(t.gateway)
    const manager = (await t.gateway.admin.issueKey({ userId: owner.user.id, management: true })).key
    const hashes = [owner.record.hash]
    for (let i = 0; i < 249; i++) {
      // Two keys at each time: the hash orders them.
      if (i % 2) clock += 1000
      hashes.push((await t.gateway.admin.issueKey({ userId: owner.user.id, label: `key ${i}` })).record.hash)
    }
    const newestFirst = hashes
      .map((hash, i) => ({ hash, at: Math.ceil((i - 1) / 2) }))
      .sort((x, y) => y.at - x.at || x.hash.localeCompare(y.hash))
      .map((k) => k.hash)
    // Every third one disabled; every seventh revoked.
    const disabled = new Set(newestFirst.filter((_, i) => i % 3 === 0))
    for (const hash of disabled) expect((await client.manage(manager, 'PATCH', `/keys/${hash}`, { disabled: true })).status).toBe(200)
    const revoked = new Set(newestFirst.filter((_, i) => i % 7 === 1))
    for (const hash of revoked) await t.gateway.admin.revokeKey(hash)
    const page = async (query: string) => {
      const before = reads()
      const res = await client.manage(manager, 'GET', `/keys${query}`)
      expect(res.status).toBe(200)
      return { hashes: ((await res.json()).data as { hash: string }[]).map((k) => k.hash), reads: reads() - before }
    }
    await page('') // the first listing ever indexes keys made before the index (none here)

    const enabled = newestFirst.filter((hash) => !disabled.has(hash) && !revoked.has(hash))
    for (const offset of [0, 100]) {
      const got = await page(offset ? `?offset=${offset}` : '')
      expect(got.hashes).toEqual(enabled.slice(offset, offset + 100))
      // The page's records (and the manager's, resolved once): never the 250 of the org.
      expect(got.reads).toBeLessThanOrEqual(got.hashes.length + 1)
    }
    for (const offset of [0, 100, 200]) {
      const got = await page(`?include_disabled=true&offset=${offset}`)
      expect(got.hashes).toEqual(newestFirst.slice(offset, offset + 100))
      expect(got.reads).toBeLessThanOrEqual(got.hashes.length + 1)
    }
    expect((await page(`?offset=${enabled.length}`)).hashes).toEqual([])

    // Enabled again, and deleted: each where it belongs.
    const back = [...disabled].find((hash) => !revoked.has(hash))!
    expect((await client.manage(manager, 'PATCH', `/keys/${back}`, { disabled: false })).status).toBe(200)
    expect((await client.manage(manager, 'DELETE', `/keys/${enabled[0]}`)).status).toBe(200)
    const now = newestFirst.filter((hash) => hash !== enabled[0] && (hash === back || (!disabled.has(hash) && !revoked.has(hash))))
    expect([...(await page('')).hashes, ...(await page('?offset=100')).hashes]).toEqual(now.slice(0, 200))
  })

  it('indexes the keys issued before the index existed, once', async () => {
    const owner = await createCustomer(t.gateway)
    const manager = (await t.gateway.admin.issueKey({ userId: owner.user.id, management: true })).key
    const hashes = [owner.record.hash]
    for (let i = 0; i < 5; i++) {
      clock += 1000
      hashes.push((await t.gateway.admin.issueKey({ userId: owner.user.id })).record.hash)
    }
    await t.gateway.admin.revokeKey(hashes[2])
    // As a storage written before the index: no entries, no mark.
    const storage = t.gateway.internals.storage
    for (const key of await storage.getKeys('gateway:key-list:')) await storage.removeItem(key)
    await storage.removeItem('gateway:key-list-indexed')
    expect(await storage.getKeys('gateway:key-list:')).toEqual([])
    // A new instance over that storage lists them all, in order.
    const fresh = await startGateway({ storage, clock: () => clock, providers: [demo()] })
    try {
      const list = async (query: string) =>
        ((await (await clientOf(fresh).manage(manager, 'GET', `/keys${query}`)).json()).data as { hash: string }[]).map((k) => k.hash)
      expect(await list('')).toEqual([hashes[5], hashes[4], hashes[3], hashes[1], hashes[0]])
      expect(await list('?include_disabled=true')).toEqual([...hashes].reverse())
      expect(await storage.getItem('gateway:key-list-indexed')).toMatchObject({ at: expect.any(String) })
    } finally {
      await fresh.close()
    }
  })
})

/** Two instances over one storage issue keys at once: never past the cap, exactly to it. */
function describeRace(name: string, makeKind: () => StorageKind) {
  describe(`${name}: two instances issuing keys at once never pass the cap`, () => {
    let kind: StorageKind
    let a: TestGateway
    let b: TestGateway
    const MAX = 12

    beforeAll(async () => {
      kind = makeKind()
      const options = () => ({ storage: kind.open(), providers: [demo()], keys: { maxPerOrg: MAX } })
      a = await startGateway(options())
      b = await startGateway(options())
    })
    afterAll(async () => {
      await a?.close()
      await b?.close()
      await kind?.cleanup()
    })

    it(`${name}: 30 keys asked at once (POST /keys and code exchanges, both instances) for 10 rooms: exactly 10 made; then deletions make exact room`, async () => {
      const owner = await createCustomer(a.gateway, { credits: '1' })
      const manager = (await b.gateway.admin.issueKey({ userId: owner.user.id, management: true })).key // 2 live
      const [ca, cb] = [clientOf(a), clientOf(b)]
      const codes = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? ca : cb).code(owner.key)))
      expect(codes.map((c) => c.res.status)).toEqual(Array(10).fill(200))
      const answers = await Promise.all([
        ...codes.map((c, i) => (i % 2 ? cb : ca).exchange(c.made!)),
        ...Array.from({ length: 20 }, (_, i) => (i % 2 ? ca : cb).manage(manager, 'POST', '/keys', { name: `race ${i}` })),
      ])
      const statuses = answers.map((res) => res.status)
      expect(statuses.filter((s) => s === 200 || s === 201)).toHaveLength(10)
      expect(statuses.filter((s) => s === 403)).toHaveLength(20)
      for (const res of answers.filter((r) => r.status === 403)) await expectCapRefusal(res, MAX)
      for (const res of answers.filter((r) => r.status !== 403)) await res.arrayBuffer()
      expect(await a.gateway.context.accounts.liveKeyCount(owner.user.org_id)).toBe(MAX)
      const listed = async () => ((await (await ca.manage(manager, 'GET', '/keys?include_disabled=true')).json()).data as { hash: string }[]).map((k) => k.hash)
      const hashes = await listed()
      expect(hashes).toHaveLength(MAX - 1) // the management key is not listed
      expect(hashes).toContain(owner.record.hash)

      // Four keys deleted, each twice at once on both instances: one 200 and one 404 each, four rooms.
      const doomed = hashes.filter((hash) => hash !== owner.record.hash).slice(0, 4)
      const deletions = await Promise.all(doomed.flatMap((hash) => [ca, cb].map((c) => c.manage(manager, 'DELETE', `/keys/${hash}`))))
      expect(deletions.map((res) => res.status).sort()).toEqual([200, 200, 200, 200, 404, 404, 404, 404])
      expect(await b.gateway.context.accounts.liveKeyCount(owner.user.org_id)).toBe(MAX - 4)
      const more = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? ca : cb).manage(manager, 'POST', '/keys', { name: `more ${i}` })))
      expect(more.map((res) => res.status).filter((s) => s === 201)).toHaveLength(4)
      expect(more.map((res) => res.status).filter((s) => s === 403)).toHaveLength(8)
      expect(await listed()).toHaveLength(MAX - 1)
      expect(await a.gateway.context.accounts.liveKeyCount(owner.user.org_id)).toBe(MAX)
      expect(sha256(manager)).not.toBe(owner.record.hash)
    })
  })
}

describeRace('memory', memoryKind)
const REDIS_URL = process.env.REDIS_URL
const DATABASE_URL = process.env.DATABASE_URL
if (REDIS_URL) describeRace('redis', () => redisKind(REDIS_URL))
else describe.skip('redis (set REDIS_URL to run)', () => it('two instances over Redis', () => {}))
if (DATABASE_URL) describeRace('postgres', () => postgresKind(DATABASE_URL))
else describe.skip('postgres (set DATABASE_URL to run)', () => it('two instances over PostgreSQL', () => {}))
