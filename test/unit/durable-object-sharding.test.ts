import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { describe, expect, it } from 'vitest'
import { toUnits } from '../../src/billing/money'
import { createHoldsStore } from '../../src/stores/budgets'
import type { DurableObjectNamespaceLike } from '../../src/stores/durable-object-call'
import { durableObjectEngine, durableObjectStorage } from '../../src/stores/durable-object-engine'
import { GLOBAL, ownerOfKey } from '../../src/stores/durable-object-owners'
import { createByokFeesStore } from '../../src/stores/byok-fees'
import { keyCounterKeys } from '../../src/stores/key-counters'
import { createKv } from '../../src/stores/kv'
import { createSpendCountersStore } from '../../src/stores/spend-counters'
import { localNamespace } from '../helpers/local-objects'

const kv = createKv(createStorage({ driver: memoryDriver() }), 'gateway')

describe('one Durable Object per org: which object owns a key (src/stores/durable-object-owners.ts)', () => {
  const holds = createHoldsStore({ kv, atomic: null as never, ops: {} as never })
  const spend = createSpendCountersStore({ kv, atomic: null as never })
  const budgetKeys = (b: ReturnType<typeof holds.orgBudget>) => [b.usedKey, ...(b.alsoUsed ?? []), b.holdsKey, ...('key' in b.limit ? [b.limit.key] : [])]
  const owners = (keys: string[]) => [...new Set(keys.map((key) => JSON.stringify(ownerOfKey(key, 'gateway'))))].map((o) => JSON.parse(o))

  it('reads the org, the key, the user or the claim from the keys the stores build', () => {
    expect(owners(budgetKeys(holds.orgBudget('o1')))).toEqual([{ org: 'o1' }])
    expect(owners(budgetKeys(holds.keyBudget('h1', { period: 'monthly', windowStart: 0, includeByok: true, units: 5n })))).toEqual([{ via: 'key', id: 'h1' }])
    expect(owners(keyCounterKeys(kv, 'h1'))).toEqual([{ via: 'key', id: 'h1' }])
    const subjects = [
      [
        { kind: 'user', id: 'u1' },
        { via: 'user', id: 'u1' },
      ],
      [{ kind: 'end-user', orgId: 'o1', hash: 'e1' }, { org: 'o1' }],
      [
        { kind: 'key', hash: 'h1' },
        { via: 'key', id: 'h1' },
      ],
      [{ kind: 'org', id: 'o1' }, { org: 'o1' }],
    ] as const
    for (const [subject, owner] of subjects) {
      const budgets = [
        spend.creditBudget(subject, 'daily', 5n, 0),
        spend.rateBudget(subject, 5, 0),
        spend.runningBudget(subject, 2),
        spend.tokensBudget(subject, 'minute', 100, 0, 10),
        spend.tokensBudget(subject, 'day', 100, 0, 10),
        spend.spendBudget(subject, 'hour', 5n, 0),
      ]
      const charges = [spend.usageCharge(subject, 'total', 1n), spend.requestCharge(subject, { start: 0, ttlMs: 1 })]
      expect(owners([...budgets.flatMap(budgetKeys), ...charges.map((c) => c.key)])).toEqual([owner])
    }
    const fees = createByokFeesStore({ kv, atomic: null as never })
    expect(owners(fees.pendingEntries('o1', 'r1', '0.1').map((e) => e.key))).toEqual([{ org: 'o1' }])
    expect(ownerOfKey(kv.key('byok-settled', 'r1'), 'gateway')).toEqual({ via: 'claim', id: 'r1' })
    for (const kind of ['ledger', 'usage', 'generation-ids', 'rollups', 'byok-requests', 'byok', 'byok-index'])
      expect(ownerOfKey(kv.key(kind, 'o1', 'x'), 'gateway')).toEqual({ org: 'o1' })
    for (const key of ['gateway:keys:h1', 'gateway:users:u1', 'gateway:orgs:o1', 'gateway:codes:c', 'elsewhere:credits:o1:used'])
      expect(ownerOfKey(key, 'gateway')).toEqual(GLOBAL)
  })

  it('answers null for a listing base that spans objects, and reads keys under another prefix or none', () => {
    for (const base of ['', 'gateway', 'gateway:usage', 'gateway:credits', 'gateway:credits:key', 'gateway:holds', 'gateway:holds:org', 'gateway:byok-settled'])
      expect(ownerOfKey(base, 'gateway')).toBeNull()
    expect(ownerOfKey('gateway:usage:o1', 'gateway')).toEqual({ org: 'o1' })
    expect(ownerOfKey('gateway:keys', 'gateway')).toEqual(GLOBAL)
    expect(ownerOfKey('credits:o2:used', '')).toEqual({ org: 'o2' })
    expect(ownerOfKey('my:app:credits:key:h:used', 'my:app')).toEqual({ via: 'key', id: 'h' })
    expect(ownerOfKey('my', 'my:app')).toBeNull()
  })
})

describe('one Durable Object per org: routing (src/stores/durable-object-router.ts), objects in this process', () => {
  const open = (namespace: DurableObjectNamespaceLike) => {
    const storage = durableObjectStorage(namespace, { perOrg: true })
    const driver = storage.getMount('').driver
    const engine = durableObjectEngine(namespace, driver.options as never)
    return { storage, atomic: engine.atomic(storage), holds: engine.holds(storage) }
  }
  const orgBudget = (org: string) => ({
    usedKey: `gateway:credits:${org}:used`,
    holdsKey: `gateway:holds:org:${org}`,
    limit: { key: `gateway:credits:${org}:granted` },
  })
  const keyBudget = (hash: string) => ({ usedKey: `gateway:credits:key:${hash}:used`, holdsKey: `gateway:holds:key:${hash}`, limit: { units: toUnits('1') } })

  it('a step naming its org puts the key’s counters in the org’s object; another opening reads them exactly; a step of another org with that key is refused', async () => {
    const namespace = localNamespace()
    const a = open(namespace)
    await a.atomic.addUnits('gateway:credits:o1:granted', toUnits('2'))
    const budgets = [orgBudget('o1'), keyBudget('h1')]
    const now = Date.now()
    expect(await a.holds.place({ id: 'r1', units: toUnits('0.5'), now, expiresAt: now + 60_000, budgets })).toEqual({ ok: true })
    await a.holds.settle({ id: 'r1', budgets, charges: [toUnits('0.3'), 0n], counters: [{ key: 'gateway:credits:key:h1:used', units: toUnits('0.3') }] })
    const b = open(namespace) // another isolate: nothing learnt yet
    expect(await b.atomic.getUnits('gateway:credits:key:h1:used')).toBe(toUnits('0.3'))
    expect(await b.atomic.getUnits('gateway:credits:o1:used')).toBe(toUnits('0.3'))
    expect(namespace.keysOf('model-gateway:org:o1')).toEqual(['gateway:credits:key:h1:used', 'gateway:credits:o1:granted', 'gateway:credits:o1:used'])
    expect(namespace.keysOf('model-gateway')).toEqual(['$do-orgs:o1', '$do-route:key:h1'])
    const other = [orgBudget('o2'), keyBudget('h1')]
    await expect(b.holds.place({ id: 'r2', units: 1n, now, expiresAt: now + 60_000, budgets: other })).rejects.toMatchObject({
      status: 500,
      message: /belong to two Durable Objects/,
    })
    expect(namespace.keysOf('model-gateway:org:o2')).toEqual([])
  })

  it('a write naming no org goes to the org of the key’s or user’s record, else to the global object for good', async () => {
    const namespace = localNamespace()
    const a = open(namespace)
    await a.storage.setItem('gateway:keys:h2', { hash: 'h2', org_id: 'o3' })
    await a.atomic.addUnits('gateway:credits:key:h2:used', 7n)
    await a.atomic.addUnits('gateway:credits:user:u9:used', 5n)
    expect(namespace.keysOf('model-gateway:org:o3')).toEqual(['gateway:credits:key:h2:used'])
    expect(namespace.keysOf('model-gateway')).toContain('gateway:credits:user:u9:used')
    const now = Date.now()
    const budgets = [orgBudget('o3'), { usedKey: 'gateway:credits:user:u9:used', holdsKey: 'gateway:holds:user:u9', limit: { units: 10n } }]
    await expect(open(namespace).holds.place({ id: 'r3', units: 1n, now, expiresAt: now + 60_000, budgets })).rejects.toMatchObject({ status: 500 })
  })

  it('lists and clears across every object; a removed BYOK claim takes its directory entry with it', async () => {
    const namespace = localNamespace()
    const a = open(namespace)
    for (const org of ['o4', 'o5']) await a.atomic.addUnits(`gateway:credits:${org}:granted`, 1n)
    await a.storage.setItem('gateway:orgs:o4', { id: 'o4' })
    expect(await a.atomic.claimAndAddUnits('gateway:byok-settled:f1', { run: 'x' }, 'gateway:credits:o4:used', 3n)).toBe(true)
    expect(await open(namespace).storage.hasItem('gateway:byok-settled:f1')).toBe(true)
    expect((await a.storage.getKeys('gateway:credits')).sort()).toEqual(['gateway:credits:o4:granted', 'gateway:credits:o4:used', 'gateway:credits:o5:granted'])
    expect((await a.storage.getKeys()).sort()).toEqual([
      'gateway:byok-settled:f1',
      'gateway:credits:o4:granted',
      'gateway:credits:o4:used',
      'gateway:credits:o5:granted',
      'gateway:orgs:o4',
    ])
    await a.storage.removeItem('gateway:byok-settled:f1')
    expect(namespace.keysOf('model-gateway').filter((k) => k.includes('route'))).toEqual([])
    await a.storage.clear()
    expect(['model-gateway', 'model-gateway:org:o4', 'model-gateway:org:o5'].flatMap((name) => namespace.keysOf(name))).toEqual([])
  })
})
