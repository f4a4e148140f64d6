// The move of a one-object deployment into one object per org (src/stores/durable-object-migrate.ts,
// docs/edge.md#moving-a-deployment-to-one-object-per-org), with the objects in this process: which keys move where,
// the directory for keys, users and BYOK fee claims, a second run, and keys of an org written meanwhile.
import { describe, expect, it } from 'vitest'
import { fromUnits } from '../../src/billing/money'
import { createAtomicOps } from '../../src/stores/atomic'
import { durableObjectStorage } from '../../src/stores/durable-object-engine'
import { migrateToPerOrg } from '../../src/stores/durable-object-migrate'
import { localNamespace } from '../helpers/local-objects'

describe('migrateToPerOrg: one Durable Object to one per org', () => {
  it('moves org keys to their objects, claims and keys through the directory, and nothing on a second run', async () => {
    const namespace = localNamespace()
    const one = durableObjectStorage(namespace, { name: 'gw' })
    const atomic = createAtomicOps(one)
    await one.setItem('gateway:keys:h1', { org_id: 'o1' })
    await one.setItem('gateway:orgs:o1', { id: 'o1' })
    await atomic.addUnits('gateway:credits:o1:granted', 5_000_000_000_000n)
    await atomic.addUnits('gateway:credits:key:h1:used', 1_250_000_000_000n)
    await atomic.addUnits('gateway:credits:key:h2:used', 1n)
    await one.setItem('gateway:generation-ids:o2:r1', { key: 'k' })
    await one.setItem('gateway:byok-settled:r1', { run: 'a', fee_eur: '0.1' })
    await one.setItem('gateway:byok-settled:r9', { run: 'b', fee_eur: '0.2' })

    const done = await migrateToPerOrg(namespace, { objectName: 'gw' })
    // o1: granted, the key's counter (its record names o1); o2: the pointer and its request's claim.
    expect(done).toEqual({ moved: 4, orgs: 2, directory: 4, stayed: 4 })
    expect(namespace.keysOf('gw:org:o1')).toEqual(['gateway:credits:key:h1:used', 'gateway:credits:o1:granted'])
    expect(namespace.keysOf('gw:org:o2')).toEqual(['gateway:byok-settled:r1', 'gateway:generation-ids:o2:r1'])
    // h2 has no record and r9 no request: their keys stay in the global object, the directory saying so.
    expect(namespace.keysOf('gw').filter((key) => !key.startsWith('$do-'))).toEqual([
      'gateway:byok-settled:r9',
      'gateway:credits:key:h2:used',
      'gateway:keys:h1',
      'gateway:orgs:o1',
    ])

    const perOrg = durableObjectStorage(namespace, { name: 'gw', perOrg: true })
    const sharded = createAtomicOps(perOrg)
    expect(fromUnits(await sharded.getUnits('gateway:credits:o1:granted'))).toBe('5')
    expect(fromUnits(await sharded.getUnits('gateway:credits:key:h1:used'))).toBe('1.25')
    expect(fromUnits(await sharded.getUnits('gateway:credits:key:h2:used'))).toBe('0.000000000001')
    expect(await perOrg.getItem('gateway:byok-settled:r1')).toEqual({ run: 'a', fee_eur: '0.1' })
    expect(await perOrg.getItem('gateway:byok-settled:r9')).toEqual({ run: 'b', fee_eur: '0.2' })
    expect((await perOrg.getKeys('gateway:byok-settled')).sort()).toEqual(['gateway:byok-settled:r1', 'gateway:byok-settled:r9'])

    expect(await migrateToPerOrg(namespace, { objectName: 'gw' })).toEqual({ moved: 0, orgs: 0, directory: 0, stayed: 4 })
  })

  it('fails naming an org key that is still in the global object at the end (written during the move)', async () => {
    const namespace = localNamespace()
    const one = durableObjectStorage(namespace, { name: 'gw' })
    await one.setItem('gateway:ledger:o1:1', { amount: '1' })
    // A one-object gateway still serving: its write lands in the global object while the move runs.
    const inner = namespace.get
    let written = false
    namespace.get = (id) => {
      const stub = inner(id)
      return {
        async fetch(url, init) {
          const res = await stub.fetch(url, init)
          if (!written && init.body.includes('"removeItem"')) {
            written = true
            await one.setItem('gateway:ledger:o1:2', { amount: '2' })
          }
          return res
        },
      }
    }
    await expect(migrateToPerOrg(namespace, { objectName: 'gw' })).rejects.toThrow(/left keys of an org in the global object.*gateway:ledger:o1:2/)
    namespace.get = inner
    expect(await migrateToPerOrg(namespace, { objectName: 'gw' })).toMatchObject({ moved: 1 })
    expect(namespace.keysOf('gw:org:o1')).toEqual(['gateway:ledger:o1:1', 'gateway:ledger:o1:2'])
  })
})
