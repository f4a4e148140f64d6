/**
 * Keys minted by a key stop with it (issue 28, items 5 and 6; docs/keys.md#minting-a-key-can-never-do-more-than-the-key-that-made-it):
 * disabling a key refuses the keys it minted (and theirs) on every instance within the authentication cache's epoch
 * poll, enabling it serves them again, deleting or revoking it refuses them for ever; `minted_by` shows who minted
 * each; and a code made by a key that was disabled, deleted or revoked since is not exchanged (docs/pkce.md#the-exchange).
 */
import { createHash, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { demo } from '../../src/providers/demo'
import { eventually } from '../helpers/eventually'
import { createCustomer, startGateway, type TestGateway } from '../helpers/server'
import { memoryKind, postgresKind, redisKind, type StorageKind } from '../helpers/storages'

const json = { 'content-type': 'application/json' }
const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const REFUSED = 'Invalid code or code_verifier: the code may be unknown, expired or already used'

function describeParents(name: string, makeKind: () => StorageKind) {
  describe(`${name}: two instances, keys minted by a key stop with it`, () => {
    let kind: StorageKind
    let a: TestGateway
    let b: TestGateway

    beforeAll(async () => {
      kind = makeKind()
      // A long cache on both instances: only the shared epoch (read every 50 ms) can make B see a change made on A.
      const options = () => ({ storage: kind.open(), providers: [demo()], authCache: { ttlMs: 60_000, epochPollMs: 50 } })
      a = await startGateway(options())
      b = await startGateway(options())
    })
    afterAll(async () => {
      await a?.close()
      await b?.close()
      await kind?.cleanup()
    })

    const me = (on: TestGateway, key: string) => on.request('/api/v1/me', { headers: bearer(key) }).then((res) => res.status)
    const code = async (on: TestGateway, key: string) => {
      const verifier = randomBytes(32).toString('base64url')
      const res = await on.request('/api/v1/auth/keys/code', {
        method: 'POST',
        headers: { ...json, ...bearer(key) },
        body: JSON.stringify({ callback_url: 'https://app.example/cb', code_challenge: createHash('sha256').update(verifier).digest('base64url') }),
      })
      expect(res.status).toBe(200)
      return { code: (await res.json()).code as string, verifier }
    }
    const exchange = (on: TestGateway, made: { code: string; verifier: string }) =>
      on.request('/api/v1/auth/keys', { method: 'POST', headers: json, body: JSON.stringify({ code: made.code, code_verifier: made.verifier }) })
    const mint = async (on: TestGateway, key: string) => {
      const res = await exchange(on, await code(on, key))
      expect(res.status).toBe(200)
      return (await res.json()).key as string
    }
    const manage = (on: TestGateway, manager: string, method: string, path: string, body?: unknown) =>
      on.request(`/api/v1${path}`, { method, headers: { ...bearer(manager), ...json }, body: body === undefined ? undefined : JSON.stringify(body) })
    /** Every status of `keys` on instance `on`, once they are all `status` (or after 3 s: the test then fails on them). */
    const settle = (on: TestGateway, keys: string[], status: number) =>
      eventually(
        () => Promise.all(keys.map((key) => me(on, key))),
        (statuses) => statuses.every((s) => s === status),
      )

    async function family() {
      const owner = await createCustomer(a.gateway, { credits: '1' })
      const manager = (await a.gateway.admin.issueKey({ userId: owner.user.id, label: 'manager', management: true })).key
      const parent = (await a.gateway.admin.issueKey({ userId: owner.user.id, label: 'parent' })).key
      const children = [await mint(a, parent), await mint(b, parent)]
      const grandchild = await mint(b, children[0])
      // Each answers on both instances, so both have cached it.
      for (const on of [a, b]) expect(await Promise.all([parent, ...children, grandchild].map((key) => me(on, key)))).toEqual([200, 200, 200, 200])
      return { owner, manager, parent, children, grandchild }
    }

    it('GET /keys, GET /keys/{hash} and GET /key show who minted each key (minted_by)', async () => {
      const { manager, parent, children, grandchild } = await family()
      const listed = (await (await manage(b, manager, 'GET', '/keys')).json()).data as { hash: string; minted_by: string | null }[]
      expect(Object.fromEntries(listed.map((k) => [k.hash, k.minted_by]))).toEqual({
        [sha256(parent)]: null,
        [sha256(children[0])]: sha256(parent),
        [sha256(children[1])]: sha256(parent),
        [sha256(grandchild)]: sha256(children[0]),
        // The customer's own first key.
        [listed.find((k) => ![parent, ...children, grandchild].map(sha256).includes(k.hash))!.hash]: null,
      })
      expect((await (await manage(a, manager, 'GET', `/keys/${sha256(grandchild)}`)).json()).data.minted_by).toBe(sha256(children[0]))
      expect((await (await b.request('/api/v1/key', { headers: bearer(children[1]) })).json()).data.minted_by).toBe(sha256(parent))
      expect((await (await b.request('/api/v1/key', { headers: bearer(parent) })).json()).data.minted_by).toBe(null)
      // The OpenAPI document shows the field.
      const doc = await (await a.request('/api/v1/openapi.json')).json()
      const schema = doc.paths['/api/v1/keys/{hash}'].get.responses['200'].content['application/json'].schema
      expect(schema.properties.data.properties.minted_by).toMatchObject({ anyOf: [{ type: 'string' }, { type: 'null' }] })
      expect(schema.properties.data.required).toContain('minted_by')
    })

    it('disabling a key refuses the keys it minted, and theirs, on both instances; enabling it serves them again', async () => {
      const { manager, parent, children, grandchild } = await family()
      const below = [...children, grandchild]
      expect((await manage(a, manager, 'PATCH', `/keys/${sha256(parent)}`, { disabled: true })).status).toBe(200)
      // At once on the instance that changed it, within the epoch poll on the other.
      expect(await Promise.all(below.map((key) => me(a, key)))).toEqual([401, 401, 401])
      expect(await settle(b, [parent, ...below], 401)).toEqual([401, 401, 401, 401])
      // Their own records are untouched: enabling the parent serves them again, everywhere.
      expect((await manage(b, manager, 'PATCH', `/keys/${sha256(parent)}`, { disabled: false })).status).toBe(200)
      expect(await Promise.all(below.map((key) => me(b, key)))).toEqual([200, 200, 200])
      expect(await settle(a, [parent, ...below], 200)).toEqual([200, 200, 200, 200])

      // A disabled child refuses only its own descendants.
      expect((await manage(b, manager, 'PATCH', `/keys/${sha256(children[0])}`, { disabled: true })).status).toBe(200)
      const statuses = await eventually(
        () => Promise.all(below.map((key) => me(a, key))),
        (s) => s[0] === 401 && s[2] === 401,
      )
      expect(statuses).toEqual([401, 200, 401])
    })

    it('deleting a key refuses the keys it minted for ever; they are listed as disabled, minted by a key no longer listed', async () => {
      const { manager, parent, children, grandchild } = await family()
      const below = [...children, grandchild]
      expect((await manage(b, manager, 'DELETE', `/keys/${sha256(parent)}`)).status).toBe(200)
      expect(await Promise.all(below.map((key) => me(b, key)))).toEqual([401, 401, 401])
      expect(await settle(a, [parent, ...below], 401)).toEqual([401, 401, 401, 401])
      // Revoked with it: listed (with include_disabled) as disabled, never enabled again.
      const all = (await (await manage(a, manager, 'GET', '/keys?include_disabled=true')).json()).data as {
        hash: string
        disabled: boolean
        minted_by: string
      }[]
      expect(all.map((k) => k.hash)).not.toContain(sha256(parent))
      expect(below.map((key) => all.find((k) => k.hash === sha256(key)))).toMatchObject([
        { disabled: true, minted_by: sha256(parent) },
        { disabled: true, minted_by: sha256(parent) },
        { disabled: true, minted_by: sha256(children[0]) },
      ])
      expect((await (await manage(a, manager, 'GET', '/keys')).json()).data.map((k: { hash: string }) => k.hash)).not.toContain(sha256(children[0]))
      const enable = await manage(b, manager, 'PATCH', `/keys/${sha256(children[1])}`, { disabled: false })
      expect(enable.status).toBe(409)
      expect(await settle(b, below, 401)).toEqual([401, 401, 401])
    })

    it('a key revoked (admin API) takes the keys it minted with it', async () => {
      const { parent, children, grandchild } = await family()
      await b.gateway.admin.revokeKey(children[0])
      expect(await Promise.all([children[0], grandchild, children[1], parent].map((key) => me(b, key)))).toEqual([401, 401, 200, 200])
      expect(await settle(a, [children[0], grandchild], 401)).toEqual([401, 401])
      expect(await me(a, children[1])).toBe(200)
    })

    it('a code made by a key disabled, deleted or revoked since (or by a key below one) is not exchanged, and no key is made', async () => {
      const { owner, manager, parent, children } = await family()
      const keysOfOwner = async () => (await a.gateway.admin.listKeys(owner.user.id)).length
      const refusedExchange = async (on: TestGateway, made: { code: string; verifier: string }) => {
        const before = await keysOfOwner()
        const res = await exchange(on, made)
        expect(res.status).toBe(403)
        expect((await res.json()).error).toMatchObject({ type: 'forbidden', message: REFUSED })
        expect(await keysOfOwner()).toBe(before)
        // The code is spent: enabling the key again does not bring it back.
        expect((await exchange(on, made)).status).toBe(403)
      }

      // Disabled after it made the code (on the other instance): void; enabled again, its new codes work.
      const byParent = await code(a, parent)
      const byChild = await code(b, children[0])
      expect((await manage(b, manager, 'PATCH', `/keys/${sha256(parent)}`, { disabled: true })).status).toBe(200)
      await refusedExchange(a, byParent)
      await refusedExchange(a, byChild) // its parent is disabled
      expect((await manage(a, manager, 'PATCH', `/keys/${sha256(parent)}`, { disabled: false })).status).toBe(200)
      expect(await settle(b, [parent], 200)).toEqual([200])
      expect(await me(b, await mint(b, parent))).toBe(200)

      // Deleted.
      const beforeDelete = await code(b, children[1])
      expect((await manage(a, manager, 'DELETE', `/keys/${sha256(children[1])}`)).status).toBe(200)
      await refusedExchange(b, beforeDelete)
      // Revoked.
      const beforeRevoke = await code(a, children[0])
      await b.gateway.admin.revokeKey(children[0])
      await refusedExchange(a, beforeRevoke)
    })
  })
}

describeParents('memory', memoryKind)
const REDIS_URL = process.env.REDIS_URL
const DATABASE_URL = process.env.DATABASE_URL
if (REDIS_URL) describeParents('redis', () => redisKind(REDIS_URL))
else describe.skip('redis (set REDIS_URL to run)', () => it('two instances over Redis', () => {}))
if (DATABASE_URL) describeParents('postgres', () => postgresKind(DATABASE_URL))
else describe.skip('postgres (set DATABASE_URL to run)', () => it('two instances over PostgreSQL', () => {}))
